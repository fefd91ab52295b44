#!/bin/bash
# Session 51 call 4 (issue 14): the grid as landed after session 50 (two residual warps in the room; M = 17..32 past
# 8192 rows on the TMA 32-token tile, sparse and dense): qjit bench, the 8 default shapes x M = 1 .. 4096, rho 0 /
# 0.05 / 0.1, one run per half (dense and sparse in the same run), every point checked before it is timed; the
# same as session 49's call 4 (bench/results/2026-11-29-session49/c4-*, grid-summary.py summarizes).
# Prediction: +8.5 / +10.5 % over dense at rho 0.05 / 0.1 (session 49: +9.8 / +12.1), the M = 32 rows past 8192
# rows +10..20 % (were +26..41), over dense that is itself faster there.
# Setup: cp bench/results/2026-11-29-session50/next-s51c4.sh .devdeps/s51c4.sh
T0=$(date +%s)
O=$OUT/c4; mkdir -p $O
cp .devdeps/s51c4.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli > /tmp/build.txt 2>&1) || { echo BUILD FAILED; tail /tmp/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
Q=$PWD/build-dev/qjit
QJIT_CACHE_DIR=/tmp/qS timeout 175 $Q bench --scheme w4a8-lqq --sparsity 0.05,0.1 --no-peers --shapes 4096x4096,12288x4096,4096x11008,8192x8192 --m 1,16,32,64,128,256,512,1024,4096 --reps 10 --csv $O/grid-1.csv > $O/grid-1.txt 2>&1
echo "grid 1 rc=$? at $(( $(date +%s) - T0 )) s"; grep -iE "mismatch|not exact|error" $O/grid-1.txt | head -3
QJIT_CACHE_DIR=/tmp/qS timeout 200 $Q bench --scheme w4a8-lqq --sparsity 0.05,0.1 --no-peers --shapes 22016x4096,10240x8192,57344x8192,8192x28672 --m 1,16,32,64,128,256,512,1024,4096 --reps 10 --csv $O/grid-2.csv > $O/grid-2.txt 2>&1
echo "grid 2 rc=$? at $(( $(date +%s) - T0 )) s"; grep -iE "mismatch|not exact|error" $O/grid-2.txt | head -3
echo "done at $(( $(date +%s) - T0 )) s"
