#!/bin/bash
# Session 48 call 1 (issue 14): where the persistent 128x256 sparse kernels' time goes (the worst points of the
# bench: +15..27 % over dense at M = 256 / 1024, rho-dependent unlike the other tiles). Trees D, S, X (the MMA
# warps' dense steps, the ring's places still handed on: bench/stamps/trees.py) at three persistent points, rho
# 0.01 and 0.1 (the stamps' blocks: unweighted error, spread over the tiles). The room's trees (Xc, Y, Z...) do
# not apply to a ring of blocks. Prediction: if X ~ D, the MMA warps' code (tile test, fold) is the cost and the
# next change is theirs; if X ~ S, it is the ring (its 32 places are one K tile's most: a tile of many blocks
# waits for the one before to be read), and the next change is the ring's.
T0=$(date +%s)
O=/tmp/o1; rm -rf $O; mkdir -p $O
cp .devdeps/s48c1.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli qjit_stamps > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
python3 bench/stamps/trees.py templates /tmp/trees W X Xr > /dev/null
echo "built $(( $(date +%s) - T0 )) s"
for r in 0.01 0.1; do
  echo "## rho $r"
  timeout 200 python3 bench/stamps/bisect.py build-dev/qjit_stamps /tmp/trees --rho $r 12288x4096x1024 4096x4096x1024 12288x4096x256 8192x8192x1024 8192x8192x4096 2>&1
done | tee $O/bisect.txt
echo "done at $(( $(date +%s) - T0 )) s"
tar -C $O -czf $OUT/c1.tgz .
