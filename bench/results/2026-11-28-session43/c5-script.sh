#!/bin/bash
# Session 43 call 5: the ring of residual blocks without the deadlock call 4 ran into (a K tile's residual
# warp waited for the previous tile's slot release, which comes only once the MMA warps start this tile): the
# places are now handed on when every MMA warp has read a tile's blocks (a per-slot `rread` barrier, a phase per
# tile that carries a residual). (1) exactness: the table's ring twin (128x256 persistent, rpieces=32) and the
# 16x64 ring that wraps every other tile, on the 6 sparse configurations (rho 0.01 .. 1), a timeout per test;
# (2) the ring points of the table (M = 256..4096) on 4 shapes. Predicted: as call 4 (+-1 point: one arrive per
# MMA warp per residual-carrying tile).
T0=$(date +%s)
O=/tmp/o5; rm -rf $O; mkdir -p $O
cp .devdeps/s43c5.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
(cd build-dev && QJIT_CACHE_DIR=/tmp/qt QJIT_TEST_PIPES="rpieces=32,reduce=cluster;producer=wg;rpieces" CK_RUN_CASE=sparse CK_DEFAULT_TIMEOUT=60 timeout 250 ./test_gpu > $O/gpu-sp.txt 2>&1; echo "rc=$?" >> $O/gpu-sp.txt)
echo "== gpu-sp: $(grep -E '^[0-9]+%: Checks' $O/gpu-sp.txt) $(tail -1 $O/gpu-sp.txt) exact $(grep -c 'acc exact' $O/gpu-sp.txt) at $(( $(date +%s) - T0 )) s"; grep -E ":F:|:E:" $O/gpu-sp.txt | head -5
Q=$PWD/build-dev/qjit
QJIT_CACHE_DIR=/tmp/qS timeout 140 $Q bench --scheme w4a8-lqq --sparsity 0.05,0.1 --no-peers --shapes 4096x4096,12288x4096,8192x8192,57344x8192 --m 256,512,1024,4096 --reps 10 --csv $O/ring.csv > $O/ring.txt 2>&1
echo "ring rc=$? at $(( $(date +%s) - T0 )) s"
python3 - $O <<'PY'
import csv, sys, math, os
d = {}; var = {}
p = f"{sys.argv[1]}/ring.csv"
if os.path.exists(p):
    for x in csv.DictReader(open(p)):
        k = (int(x["N"]), int(x["K"]), int(x["M"]), float(x["sparsity"])); d[k] = float(x["tokens_us"]); var[k] = x.get("variant", "")
for k in sorted(d):
    if k[3] > 0: print("  ", k, f"{d[k]:.2f} dense {d[(k[0], k[1], k[2], 0.0)]:.2f} {100*(d[k]/d[(k[0], k[1], k[2], 0.0)]-1):+.1f}%", "ring" if "rpieces" in var[k] else "")
PY
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c5.tgz .
