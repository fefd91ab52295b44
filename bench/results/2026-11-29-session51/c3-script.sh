#!/bin/bash
# Session 51 call 3 (issues 16, 14, 12): the few-token table past 8192 rows (working tree: dispatch.lua's few_tma /
# FEW_WIDE alternatives at M <= 8 and M <= 16) -- (1) the GPU suite's table tests with the token counts 24 and 200
# (session 50's next-s51c2.sh), every scheme, in lanes; (2) the table against the last commit's
# (.devdeps/tpl/O) on twelve layers past 8192 rows at M = 1 / 8 / 16, three of them never measured (15360x5120,
# 27648x5120, 37888x3584), old/new/old/new; (3) model steps (--layers, one graph, tokens in), old and new:
# Llama-2-7B (32 layers, twice each), Llama-3-8B, Llama-2-13B, a 70B-like layer and Qwen2.5-7B (16 layers).
# Prediction: (2) 0.78 on 57344x8192 at M <= 8, 0.75-0.8 on 28672x4096 / 28672x8192 / 27648x5120 / 37888x3584
# at M = 16, 0.95-0.98 on 12288x4096 / 10240x8192 / 11008x4096, 1.00 elsewhere; (3) Llama-2-7B M = 1..16 -1..-2 %,
# Llama-3-8B M = 16 -5 %, the 70B-like layer M <= 8 -10 %.
T0=$(date +%s)
O=$OUT/c3; mkdir -p $O; cp .devdeps/s51c3.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > /tmp/build.txt 2>&1) || { echo BUILD FAILED; tail /tmp/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
cd build-dev
run_lane() { QJIT_CACHE_DIR=/tmp/qt-$1 QJIT_TEST_SCHEMES=$2 CK_RUN_CASE=$3 CK_DEFAULT_TIMEOUT=230 timeout 230 ./test_gpu > /tmp/gpu-$1.txt 2>&1; echo "rc=$?" >> /tmp/gpu-$1.txt; }
for s in w4a8-lqq w4a8-qoq w4a8-is w8a8 w4a4; do run_lane L$s $s llama & run_lane O$s $s odd & done
run_lane SL "" sparse_llama &
run_lane BF "" bf16 &
wait
cd ..
for f in /tmp/gpu-*.txt; do
  echo "== $(basename $f .txt): $(tail -1 $f) exact $(grep -c 'acc exact' $f); $(grep -E '^[0-9]+%' $f)"
  grep -E ":F:|:E:|mismatch" $f | head -5
done | tee $O/gpu.txt
cat /tmp/gpu-*.txt > $O/gpu-all.txt
echo "suite done at $(( $(date +%s) - T0 )) s"
T=$PWD/.devdeps/tpl/O/templates
Q=$PWD/build-dev/qjit
SH=12288x4096,11008x4096,14336x4096,22016x4096,28672x4096,13824x5120,15360x5120,27648x5120,37888x3584,10240x8192,28672x8192,57344x8192
for t in old new old2 new2; do
  P=$PWD/templates; case $t in old*) P=$T;; esac
  QJIT_TEMPLATE_PATH=$P QJIT_CACHE_DIR=/tmp/qC-${t%2} timeout 60 $Q bench --scheme w4a8-lqq --no-peers --shapes $SH --m 1,8,16 --reps 10 --csv $O/bench-$t.csv > /tmp/bench-$t.txt 2>&1
  echo "bench $t rc=$? at $(( $(date +%s) - T0 )) s"; grep -iE "mismatch|not exact|error" /tmp/bench-$t.txt | head -3
done
step() { QJIT_TEMPLATE_PATH=$2 QJIT_CACHE_DIR=/tmp/qC-$3 timeout 40 $Q bench --scheme w4a8-lqq --no-peers --layers $4 --m 1,4,8,16 --reps 10 $5 > $O/step-$1-$3.txt 2>&1; echo "step $1 $3 rc=$? at $(( $(date +%s) - T0 )) s"; }
for r in 1 2; do step l2-7b$r $T old 32 ""; step l2-7b$r $PWD/templates new 32 ""; done
for m in "l3-8b 6144x4096,4096x4096,28672x4096,4096x14336" "l2-13b 15360x5120,5120x5120,27648x5120,5120x13824" "l70 10240x8192,8192x8192,57344x8192,8192x28672" "qwen7b 4608x3584,3584x3584,37888x3584,3584x18944"; do
  set -- $m
  step $1 $T old 16 "--shapes $2"; step $1 $PWD/templates new 16 "--shapes $2"
done
grep -h "summary\|tokens in " $O/step-*.txt > /dev/null
for f in $O/step-*.txt; do echo "$(basename $f .txt): $(grep -E '^\s+M=[0-9]+ +tokens in' $f | awk '{printf "%s %s  ", $1, $4}')"; done | tee $O/steps.txt
echo "done at $(( $(date +%s) - T0 )) s"
