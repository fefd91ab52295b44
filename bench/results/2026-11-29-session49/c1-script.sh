#!/bin/bash
# Session 49 call 1 (issue 14): where the sparse kernels' time goes after 29ebae6 (the ring's parts in one bulk
# copy), on the two kinds of points left worst in session 48's grid (grid-summary.txt): the persistent 128x256
# ring kernels (M >= 256..4096, +12..20 % at rho 0.1) and the 128x128 room tile at M = 128..512 (+18..26 %, about the
# same at rho 0.05 and 0.1: a fixed cost). Trees (bench/stamps/trees.py): W (split kept, both paths dense steps),
# X (dense steps), Xr (X without the ring's copies), Xc (X without the room's copies), Y (no lookups), Z (no
# residual warp), Z2 (no room). Stamps' blocks: unweighted error, spread over the tiles.
# Third, the cp.async warpgroup-MMA twin at M = 32 past 8192 rows (+18..51 %, 5 stages against the dense kernel's
# 8): trees X and Xw (X without warp 0's lookup in the stage load), at the table's stages and with D, S and the
# trees all at 5 (--stages 5): D5 - D the stages the room took, S5 - X5 the MMA warps' code, X5 - Xw5 the lookup.
# Prediction: on the ring kernels X - Xr down from 10.5-13 points (session 48 call 2) to ~3-4; on the 128x128 tile the
# fixed cost is S - X or Y - Z (the MMA warps' one path or the residual warp's arrival), not the copies (Xc ~ X).
T0=$(date +%s)
O=$OUT/c1; mkdir -p $O; cp .devdeps/s49c1.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli qjit_stamps > $O/build.txt 2>&1) || { echo BUILD FAILED; exit 1; }
python3 bench/stamps/trees.py templates /tmp/tr W X Xr > /dev/null   # the ring's trees (Y, Z, Z2 do not apply to a ring)
python3 bench/stamps/trees.py templates /tmp/tm X Xc Y Z Z2 > /dev/null   # the room's
python3 bench/stamps/trees.py templates /tmp/tw X Xw > /dev/null   # the cp.async pipe's
echo "built $(( $(date +%s) - T0 )) s"
timeout 140 python3 bench/stamps/bisect.py build-dev/qjit_stamps /tmp/tr --rho 0.1 12288x4096x1024 8192x8192x4096 57344x8192x256 2>&1 | tee $O/bisect-ring.txt
timeout 160 python3 bench/stamps/bisect.py build-dev/qjit_stamps /tmp/tm --rho 0.05 8192x8192x256 4096x11008x512 22016x4096x256 8192x28672x128 2>&1 | tee $O/bisect-room.txt
for st in "" "--stages 5"; do
  timeout 70 python3 bench/stamps/bisect.py build-dev/qjit_stamps /tmp/tw --rho 0.05 $st 12288x4096x32 10240x8192x32 57344x8192x32 2>&1
done | tee $O/bisect-m32.txt
echo "done at $(( $(date +%s) - T0 )) s"
