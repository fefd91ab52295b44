#!/bin/bash
# Session 53 call 3 (issue 14): the 72-point sparse grid (8 default shapes x M = 1..4096, rho 0.05 / 0.1) on the
# table as landed in session 52 (the 32-token ring at M = 17..32 past 8192 rows where one wave holds it), the
# same commands as session 51's c5 grid (+9.5 / +11.7 % over dense then).
# Prediction: +9.1 / +11.2 %: of the 72 points two change, both at M = 32: 10240x8192 (+35 -> ~+15 %) and
# 12288x4096 (192 tiles of 64 rows <= 1.5 x 132: +15 -> ~+10 %).
# Setup: cp bench/results/2026-11-29-session52/next-s53c3.sh .devdeps/s53c3.sh
T0=$(date +%s)
O=$OUT/c3; mkdir -p $O; cp .devdeps/s53c3.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli > /tmp/build.txt 2>&1) || { echo BUILD FAILED; tail /tmp/build.txt; exit 1; }
Q=$PWD/build-dev/qjit
QJIT_CACHE_DIR=/tmp/qS timeout 240 $Q bench --scheme w4a8-lqq --sparsity 0.05,0.1 --no-peers --shapes 4096x4096,12288x4096,4096x11008,8192x8192 --m 1,16,32,64,128,256,512,1024,4096 --reps 10 --csv $O/grid-1.csv > $O/grid-1.txt 2>&1
echo "grid 1 rc=$? at $(( $(date +%s) - T0 )) s"; grep -iE "wrong|mismatch|interrupted" $O/grid-1.txt | head -3
QJIT_CACHE_DIR=/tmp/qS timeout 280 $Q bench --scheme w4a8-lqq --sparsity 0.05,0.1 --no-peers --shapes 22016x4096,10240x8192,57344x8192,8192x28672 --m 1,16,32,64,128,256,512,1024,4096 --reps 10 --csv $O/grid-2.csv > $O/grid-2.txt 2>&1
echo "grid 2 rc=$? at $(( $(date +%s) - T0 )) s"; grep -iE "wrong|mismatch|interrupted" $O/grid-2.txt | head -3
grep -A12 "over dense" $O/grid-1.txt $O/grid-2.txt | head -40
echo "done at $(( $(date +%s) - T0 )) s"
