#!/bin/bash
# Session 51 call 4 (issue 16): call 3's new few-token table was 0.95 geomean on 36 single-layer points (no loss),
# and took Llama-3-8B / Llama-2-13B / Qwen2.5-7B M = 16 steps down 6-13 % and the 70B-like step 7-28 %; but
# Llama-2-7B's step went up 4.3 % at M = 1 / 4 (1150 -> 1200 us). Its layers changed by two alternatives:
# 12288x4096 onto the TMA tile at split 2 (the one-wave band) and 22016x4096 at M <= 8 onto split 2 (FEW_WIDE
# in the M <= 8 bucket). Which one: the step with each taken out (X1: no band; X2: no FEW_WIDE at M <= 8; X3:
# neither), twice each, and one-shape steps (every layer the same shape, own weights, one graph) old / new.
# Prediction: the loss is the band's TMA kernel in the graph (its 8-stage CTAs, three an SM, leave the next
# kernel no room to start under the launch trigger): X1 back to ~1150 at M = 1, X2 ~1200.
T0=$(date +%s)
O=$OUT/c4; mkdir -p $O; cp .devdeps/s51c4.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli > /tmp/build.txt 2>&1) || { echo BUILD FAILED; tail /tmp/build.txt; exit 1; }
Q=$PWD/build-dev/qjit; T=$PWD/.devdeps/tpl
step() { QJIT_TEMPLATE_PATH=$T/$2/templates QJIT_CACHE_DIR=/tmp/qC-$2 timeout 40 $Q bench --scheme w4a8-lqq --no-peers --layers $3 --m 1,4,8,16 --reps 10 $4 > /tmp/step-$1-$2.txt 2>&1
  echo "$1 $2: $(grep -E '^\s+M=[0-9]+ +tokens in' /tmp/step-$1-$2.txt | awk '{printf "%s %s  ", $1, $4}') rc=$?"; }
for r in 1 2; do for x in O N X1 X2 X3; do step l2-7b$r $x 32 ""; done; done | tee $O/steps.txt
for s in 12288x4096:64 22016x4096:64 11008x4096:64 28672x4096:64 10240x8192:48 57344x8192:16; do
  for x in O N; do step one-${s%:*} $x ${s#*:} "--shapes ${s%:*}"; done
done | tee -a $O/steps.txt
cat /tmp/step-l2-7b1-N.txt > $O/step-l2-7b-N.txt
echo "done at $(( $(date +%s) - T0 )) s"
