#!/bin/bash
# Session 48 call 6 (issue 14): at M = 32 past 8192 rows the sparse layers run the dense choice's cp.async wgmma
# twin (+18..50 % over dense in call 5's grid); session 42 kept it there against the TMA 32-token tile (then 19.14 /
# 30.27 / 108.5 against 18.37 / 29.18 / 125.5 us). The TMA tiles have changed since (one path, even slices, the
# residual warp's own branch). Forced: the 32x64 TMA producer tile at 8 / 6 stages split 2 in a cluster and 6 split 1.
# Prediction: the TMA tile ahead on 57344x8192 (as in session 42) and within +-5 % elsewhere.
O=$OUT/c6; mkdir -p $O; cp .devdeps/s48c6.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli > $O/build.txt 2>&1) || { echo BUILD FAILED; exit 1; }
QJIT_CACHE_DIR=/tmp/qS timeout 150 build-dev/qjit bench --scheme w4a8-lqq --sparsity 0.05,0.1 --no-peers --shapes 12288x4096,22016x4096,10240x8192,57344x8192 --m 32 --reps 10 \
  --variant "pipe=tma;tile=32x64x128;warps=1x4;stages=8;split=2;reduce=cluster;producer=wg" \
  --variant "pipe=tma;tile=32x64x128;warps=1x4;stages=6;split=2;reduce=cluster;producer=wg" \
  --variant "pipe=tma;tile=32x64x128;warps=1x4;stages=6;split=1;producer=wg" --csv $O/m32.csv > $O/m32.txt 2>&1
echo "rc=$?"; grep -iE "mismatch|not exact|error" $O/m32.txt | head -3
python3 - $O/m32.csv <<'P'
import csv,sys,re
for r in csv.DictReader(open(sys.argv[1])):
    print(r['N'],r['K'],r['sparsity'],r['forced'],r['tokens_us'],re.sub(r'actq=kernel;arch=sm_90a;epi=f16;g=128;kernel=gemm;','',r['variant']))
P
