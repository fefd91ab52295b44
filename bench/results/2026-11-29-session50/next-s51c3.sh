#!/bin/bash
# Session 51 call 3 (issue 14): sparse layers at M <= 16 past 8192 rows. The table runs the 16-token TMA tile at
# 6 stages, split 2 in a cluster there (session 42); at M = 17..32 session 50 found split 1 at 8 stages ahead of
# split 2 by 0.69-0.93 on layers of 14336 rows and more. Force the 16-token tile at split 1, 8 stages (and the
# 16x128 tile at split 2, 8 stages) on the sparse layers at M = 1 / 8 / 16, rho 0.05, against the table.
# Prediction: split 1 ahead (0.85-0.95) from 14336 rows where the split-2 tile's CTAs make more than a wave
# (N / 64 x 2 > 3 x 132 at 6 stages), level below.
# Setup: cp bench/results/2026-11-29-session50/next-s51c3.sh .devdeps/s51c3.sh
O=$OUT/c3; mkdir -p $O; cp .devdeps/s51c3.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli > /tmp/build.txt 2>&1) || { echo BUILD FAILED; tail /tmp/build.txt; exit 1; }
T0=$(date +%s)
QJIT_CACHE_DIR=/tmp/qS timeout 300 build-dev/qjit bench --scheme w4a8-lqq --sparsity 0.05 --no-peers --shapes 11008x4096,12288x4096,14336x4096,28672x4096,10240x8192,57344x8192 --m 1,8,16 --reps 10 \
  --variant "pipe=tma;tile=16x64x128;warps=1x4;stages=8;split=1;producer=wg;wu8=1" \
  --variant "pipe=tma;tile=16x128x128;warps=1x4;stages=8;split=2;reduce=cluster;producer=wg;wu8=1" --csv $O/m16.csv > $O/m16.txt 2>&1
echo "bench rc=$? at $(( $(date +%s) - T0 )) s"; grep -iE "mismatch|not exact|error" $O/m16.txt | head -3
python3 - $O/m16.csv <<'P' | tee $O/summary.txt
import csv,sys,re
for r in csv.DictReader(open(sys.argv[1])):
    print(r['N'], r['K'], r['M'], r['sparsity'], r['forced'], r['tokens_us'], re.sub(r'actq=kernel;arch=sm_90a;epi=f16;g=128;kernel=gemm;', '', r['variant']))
P
