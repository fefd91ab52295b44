#!/bin/bash
# Session 51 call 5 (issues 16, 14): the few-token table as it lands (call 4's X2 plus the M <= 8 bucket's split
# rule at M = 9..16: no split past it, at most 2) -- model steps against the last commit's table (.devdeps/tpl/O)
# and call 3's runs; then the 72-point sparse grid as landed (session 50's next-s51c4.sh).
# Prediction: Llama-2-7B's step at M = 1..8 as X2 (1150-1160 us at M = 1), M = 16 ~1345 (22016x4096 at split 1:
# call 4's one-shape step 890 against 1001 us for 64 layers); Llama-3-8B / Llama-2-13B / Qwen2.5-7B / the
# 70B-like steps as call 3's new. Grid: +8.5 / +10.5 % over dense at rho 0.05 / 0.1.
T0=$(date +%s)
O=$OUT/c5; mkdir -p $O; cp .devdeps/s51c5.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli > /tmp/build.txt 2>&1) || { echo BUILD FAILED; tail /tmp/build.txt; exit 1; }
Q=$PWD/build-dev/qjit
step() { QJIT_TEMPLATE_PATH=$2 QJIT_CACHE_DIR=/tmp/qC-$3 timeout 40 $Q bench --scheme w4a8-lqq --no-peers --layers $4 --m 1,4,8,16 --reps 10 $5 > /tmp/step-$1-$3.txt 2>&1
  echo "$1 $3: $(grep -E '^\s+M=[0-9]+ +tokens in' /tmp/step-$1-$3.txt | awk '{printf "%s %s  ", $1, $4}')"; }
for r in 1 2; do step l2-7b$r $PWD/.devdeps/tpl/O/templates O 32 ""; step l2-7b$r $PWD/templates new 32 ""; done | tee $O/steps.txt
step one-22016x4096 $PWD/templates new 64 "--shapes 22016x4096" | tee -a $O/steps.txt
for m in "l3-8b 6144x4096,4096x4096,28672x4096,4096x14336" "l2-13b 15360x5120,5120x5120,27648x5120,5120x13824" "l70 10240x8192,8192x8192,57344x8192,8192x28672" "qwen7b 4608x3584,3584x3584,37888x3584,3584x18944"; do
  set -- $m; step $1 $PWD/templates new 16 "--shapes $2"
done | tee -a $O/steps.txt
QJIT_CACHE_DIR=/tmp/qC-new timeout 60 $Q bench --scheme w4a8-lqq --layers 32 --m 1,4,16,64 --reps 10 > $O/step-l2-7b-peers.txt 2>&1
echo "steps done at $(( $(date +%s) - T0 )) s"
QJIT_CACHE_DIR=/tmp/qS timeout 175 $Q bench --scheme w4a8-lqq --sparsity 0.05,0.1 --no-peers --shapes 4096x4096,12288x4096,4096x11008,8192x8192 --m 1,16,32,64,128,256,512,1024,4096 --reps 10 --csv $O/grid-1.csv > $O/grid-1.txt 2>&1
echo "grid 1 rc=$? at $(( $(date +%s) - T0 )) s"; grep -iE "mismatch|not exact|error" $O/grid-1.txt | head -3
QJIT_CACHE_DIR=/tmp/qS timeout 200 $Q bench --scheme w4a8-lqq --sparsity 0.05,0.1 --no-peers --shapes 22016x4096,10240x8192,57344x8192,8192x28672 --m 1,16,32,64,128,256,512,1024,4096 --reps 10 --csv $O/grid-2.csv > $O/grid-2.txt 2>&1
echo "grid 2 rc=$? at $(( $(date +%s) - T0 )) s"; grep -iE "mismatch|not exact|error" $O/grid-2.txt | head -3
echo "done at $(( $(date +%s) - T0 )) s"
