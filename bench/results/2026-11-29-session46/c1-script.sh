#!/bin/bash
# Session 46 call 1 (issue 14), on main: what Z2's 2-6 % over dense is made of. Trees (bench/stamps/trees.py) Y, Z,
# Z2, Z3 and the new Z4 (Z2 without the residual's kernel parameters and the residual warp's entry into the
# producer's loop), event times through bench/stamps/bisect.py (D, S, each tree, D again) at split 1 and split 2.
# Prediction: Z4 ~ D2 at split 1 (the 2 % is the parameters / the dead branch), Z2 ~ Z4 at split 2 now that the
# slices' table is gone (session 45 measured Z2 +5-6 % there with it).
T0=$(date +%s)
O=/tmp/o1; rm -rf $O; mkdir -p $O
cp .devdeps/s46c1.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli qjit_stamps > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
python3 bench/stamps/trees.py templates /tmp/trees Y Z Z2 Z3 Z4 > /dev/null
echo "built $(( $(date +%s) - T0 )) s"
timeout 400 python3 bench/stamps/bisect.py build-dev/qjit_stamps /tmp/trees 12288x4096x128 4096x4096x64 4096x4096x256 8192x8192x128 2>&1 | tee $O/bisect.txt
echo "done at $(( $(date +%s) - T0 )) s"
tar -C $O -czf $OUT/c1.tgz .
