#!/bin/bash
# Session 50 call 1 (issue 14): the same bisection as session 49's call 1 (c1-script.sh) on main after 8f62e62 (the
# residual's cursor as an in-order walk), to see what the cheaper lookup left: the persistent 128x256 ring kernels
# (trees W, X, Xr), the 128x128 room at M = 256..512 (X, Xc, Y, Z, Z2: Xc - Y was the lookups, 6-9 points) and the
# cp.async warpgroup-MMA twin at M = 32 (X, Xw at the table's stages and all at 5: X - Xw was 11-20 points).
# Prediction: Xc - Y down to 0-3 points, X - Xw to 3-8; the copies (X - Xc, X - Xr) and the fold (S - X) unchanged.
# (Each list without the shape that ran past its time limit in session 49.) Setup: cp bench/results/2026-11-29-session49/next-s50c1.sh .devdeps/s50c1.sh
T0=$(date +%s)
O=$OUT/c1; mkdir -p $O; cp .devdeps/s50c1.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli qjit_stamps > $O/build.txt 2>&1) || { echo BUILD FAILED; exit 1; }
python3 bench/stamps/trees.py templates /tmp/tr W X Xr > /dev/null   # the ring's trees (Y, Z, Z2 do not apply to a ring)
python3 bench/stamps/trees.py templates /tmp/tm X Xc Y Z Z2 > /dev/null   # the room's
python3 bench/stamps/trees.py templates /tmp/tw X Xw > /dev/null   # the cp.async pipe's
echo "built $(( $(date +%s) - T0 )) s"
timeout 140 python3 bench/stamps/bisect.py build-dev/qjit_stamps /tmp/tr --rho 0.1 12288x4096x1024 8192x8192x4096 2>&1 | tee $O/bisect-ring.txt
timeout 160 python3 bench/stamps/bisect.py build-dev/qjit_stamps /tmp/tm --rho 0.05 8192x8192x256 4096x11008x512 22016x4096x256 2>&1 | tee $O/bisect-room.txt
for st in "" "--stages 5"; do
  timeout 70 python3 bench/stamps/bisect.py build-dev/qjit_stamps /tmp/tw --rho 0.05 $st 12288x4096x32 10240x8192x32 2>&1
done | tee $O/bisect-m32.txt
echo "done at $(( $(date +%s) - T0 )) s"
