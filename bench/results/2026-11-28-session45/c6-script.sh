#!/bin/bash
# Session 45 call 6 (issue 14): split-K slices of sparse kernels by work (kslice, main) against even slices (tree K:
# main's templates with kslice = 0). kslice weighs a residual 16x64 block as a dense one; calls 3-4 put its cost
# at ~0.5 of one (pace at rho 0.1 vs 0.01), and with a cluster's slices waiting for each other a slice one K tile
# longer sets the pair's time. Prediction: at rho 0.1 even slices 1-4 % faster on split-2 points; rho 0.01 and the
# split-1 control (12288x4096 M=128) within noise.
T0=$(date +%s)
O=/tmp/o6; rm -rf $O; mkdir -p $O
cp .devdeps/s45c6.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli qjit_stamps > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
timeout 300 python3 bench/stamps/ab.py build-dev/qjit_stamps $PWD/templates $PWD/.devdeps/tpl/K/templates 4096x4096x64 4096x4096x256 8192x8192x128 4096x4096x16 4096x11008x64 12288x4096x128 2>&1 | tee $O/ab.txt
echo "done at $(( $(date +%s) - T0 )) s"
tar -C $O -czf $OUT/c6.tgz .
