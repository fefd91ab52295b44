#!/bin/bash
# Session 50 call 6 (dense, M = 32 past 8192 rows): call 4 had the dense w4a8-lqq layers faster on the 32-token TMA
# tile with a producer warpgroup (6 stages, split 2 in a cluster: 14336x4096 17.5 against the table's cp.async
# warpgroup tile's 20.3 us, 16384x8192 28.4 / 35.1, 57344x8192 74.4 / 83.5; level on 12288x4096, 10240x8192).
# Do the other 4-bit schemes' tables (QoQ's subtraction, IS's rescale in the K loop: registers) see the same?
# Prediction: QoQ as LQQ (0.85-0.93 past 264 CTAs); IS smaller or none (its rescale's registers).
O=$OUT/c6; mkdir -p $O; cp .devdeps/s50c6.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli > /tmp/build.txt 2>&1) || { echo BUILD FAILED; tail /tmp/build.txt; exit 1; }
for s in w4a8-qoq w4a8-is; do
  QJIT_CACHE_DIR=/tmp/qD timeout 110 build-dev/qjit bench --scheme $s --no-peers --shapes 12288x4096,14336x4096,28672x4096,16384x8192,57344x8192 --m 32 --reps 10 \
    --variant "pipe=tma;tile=32x64x128;warps=1x4;stages=6;split=2;reduce=cluster;producer=wg" \
    --variant "pipe=tma;tile=32x64x128;warps=1x4;stages=6;split=1;producer=wg" --csv $O/dense-$s.csv > $O/dense-$s.txt 2>&1
  echo "$s rc=$?"
done
python3 - $O <<'P' | tee $O/summary.txt
import csv,sys,re,glob
for f in sorted(glob.glob(sys.argv[1]+'/dense-*.csv')):
    for r in csv.DictReader(open(f)):
        print(r['scheme'],r['N'],r['K'],r['forced'],r['tokens_us'],re.sub(r'actq=kernel;arch=sm_90a;epi=f16;kernel=gemm;','',r['variant']))
P
