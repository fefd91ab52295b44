#!/bin/bash
# Session 50 call 3 (issue 14): M = 32 past 8192 rows after the walk (8f62e62), the worst points of session 49's
# grid (57344x8192 +35 / +41 %, 10240x8192 +26 / +29 %): the table's cp.async wgmma twin (5 stages, the room) against
# the same twin forced at 6 and 8 stages (fewer CTAs an SM) and the TMA 32x64 producer tile at 8 / 6 stages split 2
# in a cluster and 6 split 1 (session 48's call 6: ahead only on 57344x8192, 108 against 121 us).
# Prediction: the twin at 8 stages ahead where the weights dominate (57344x8192, 10240x8192) if the stages the room
# took (2-3 points in session 49's bisection) cost more than the CTA an SM it frees; the TMA tile as in session 48.
# Setup: cp bench/results/2026-11-29-session49/next-s50c3.sh .devdeps/s50c3.sh
O=$OUT/c3; mkdir -p $O; cp .devdeps/s50c3.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli > $O/build.txt 2>&1) || { echo BUILD FAILED; exit 1; }
QJIT_CACHE_DIR=/tmp/qS timeout 200 build-dev/qjit bench --scheme w4a8-lqq --sparsity 0.05,0.1 --no-peers --shapes 12288x4096,22016x4096,10240x8192,57344x8192 --m 32 --reps 10 \
  --variant "pipe=tma;tile=32x64x128;warps=1x4;stages=8;split=2;reduce=cluster;producer=wg" \
  --variant "pipe=tma;tile=32x64x128;warps=1x4;stages=6;split=2;reduce=cluster;producer=wg" \
  --variant "pipe=tma;tile=32x64x128;warps=1x4;stages=6;split=1;producer=wg" \
  --variant "pipe=wgmma;tile=32x64x128;warps=1x4;stages=6;split=2;reduce=cluster" \
  --variant "pipe=wgmma;tile=32x64x128;warps=1x4;stages=8;split=2;reduce=cluster" --csv $O/m32.csv > $O/m32.txt 2>&1
echo "rc=$?"; grep -iE "mismatch|not exact|error" $O/m32.txt | head -3
python3 - $O/m32.csv <<'P'
import csv,sys,re
for r in csv.DictReader(open(sys.argv[1])):
    print(r['N'],r['K'],r['sparsity'],r['forced'],r['tokens_us'],re.sub(r'actq=kernel;arch=sm_90a;epi=f16;g=128;kernel=gemm;','',r['variant']))
P
