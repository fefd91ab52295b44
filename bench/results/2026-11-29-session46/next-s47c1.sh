#!/bin/bash
# Session 47 call 1 (issue 14), on main: is the residual copies' cost (X - Xc, steady state: session 46 call 5) the
# ring's lead? Trees X and Xc (bench/stamps/trees.py) through bisect.py at the table's stages and with the ring
# forced shallower (--stages 4; 4096x4096 M = 64 also at 6). Prediction if the ring is latency-bound (each tile's
# data lands about when it is needed, a later-landing residual block delays its CTA by the difference): X - Xc grows
# as the ring shrinks (at 4 stages roughly 1.5x what it is at 6), D slows with it; if X - Xc stays put, the cost is
# not the lead and the next look is the copies' issue (the residual warp's time from the slot's release to its
# bulk copy, stamped alone).
T0=$(date +%s)
O=/tmp/o1; rm -rf $O; mkdir -p $O
cp .devdeps/s47c1.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli qjit_stamps > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
python3 bench/stamps/trees.py templates /tmp/trees X Xc > /dev/null
echo "built $(( $(date +%s) - T0 )) s"
for r in 0.01 0.1; do
  for s in table 4 6; do
    a=""; [ $s != table ] && a="--stages $s"
    P="12288x4096x128 4096x4096x64"; [ $s = 6 ] && P="4096x4096x64"
    echo "## rho $r stages $s"
    timeout 100 python3 bench/stamps/bisect.py build-dev/qjit_stamps /tmp/trees --rho $r $a $P 2>&1
  done
done | tee $O/bisect.txt
echo "done at $(( $(date +%s) - T0 )) s"
tar -C $O -czf $OUT/c1.tgz .
