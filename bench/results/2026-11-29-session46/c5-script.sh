#!/bin/bash
# Session 46 call 5 (issue 14): where X - Xc (the residual copies' cost with the MMA warps' dense code) comes from:
# the ring's first fill or the steady state. Trees (bench/stamps/trees.py) X, Xc, Xs (X without the copies of the
# slice's first STAGES tiles) and Xt (X with only those). Call 4 moved the first rmask loads to the kernel's start
# and changed nothing. Prediction: the copies cost in the steady state (X - Xs small, Xt ~ Xc), since at rho 0.01
# only ~1 in 5 CTAs has a block in its first STAGES tiles; if instead Xs ~ Xc, the first fill is the cost.
T0=$(date +%s)
O=/tmp/o5; rm -rf $O; mkdir -p $O
cp .devdeps/s46c5.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli qjit_stamps > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
python3 bench/stamps/trees.py templates /tmp/trees X Xc Xs Xt > /dev/null
echo "built $(( $(date +%s) - T0 )) s"
timeout 110 python3 bench/stamps/bisect.py build-dev/qjit_stamps /tmp/trees 12288x4096x128 4096x4096x64 4096x4096x256 8192x8192x128 2>&1 | tee $O/bisect-001.txt
timeout 60 python3 bench/stamps/bisect.py build-dev/qjit_stamps /tmp/trees --rho 0.1 12288x4096x128 4096x4096x64 2>&1 | tee $O/bisect-01.txt
echo "done at $(( $(date +%s) - T0 )) s"
tar -C $O -czf $OUT/c5.tgz .
