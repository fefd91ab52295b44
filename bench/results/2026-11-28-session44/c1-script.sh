#!/bin/bash
# Session 44 call 1 (issue 14): bisect the sparse TMA kernels' fixed cost at rho 0.01 with the diagnostic trees of
# bench/stamps/trees.py (X, X0, Xc, Y, Z, Z2, Z3 = Z2 with the dense register split), D repeated (D2) for the spread.
# Predicted: Z3 ~ D (the 3..6 % left in Z2 is the MMA warpgroups' 232 registers against dense's 240), X0 ~ Y on the
# one-wave 12288x4096 M=128 point (the residual warp's rmask loads are its cost there).
T0=$(date +%s)
O=/tmp/o1; rm -rf $O; mkdir -p $O
cp .devdeps/s44c1.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli qjit_stamps > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
python3 bench/stamps/trees.py templates /tmp/trees X X0 Xc Y Z Z2 Z3 > /dev/null || exit 1
timeout 420 python3 bench/stamps/bisect.py build-dev/qjit_stamps /tmp/trees --reps 20 12288x4096x128 4096x4096x64 4096x4096x256 12288x4096x64 8192x8192x128 2>&1 | tee $O/bisect.txt
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c1.tgz .
