#!/bin/bash
# Session 50 call 4 (issue 14): sparse layers at M = 32 past 8192 rows. Call 3 (forced keys without wu8, so the
# wgmma rows were not the table's kernel) had the TMA 32x64 producer tile at 6 stages, split 1, ahead of the table's
# cp.async twin (wgmma 32x64, 5 stages, split 2 in a cluster) where the layer gives it many CTAs (22016x4096
# 29.9 against 32.0 us, 57344x8192 99.9 / 114.2) and behind on 12288x4096 / 10240x8192 (192 / 160 CTAs).
# Here with wu8=1 (the table's), on the four shapes and four not measured before (14336x4096, 28672x4096,
# 16384x8192, 28672x8192), split 1 at 6 / 8 stages and split 2 at 6 in a cluster.
# Prediction: split 1 at 6 ahead by 5-13 % where N / 64 >= 2 x SMs (264 CTAs), behind below.
# Then exactness of the split-1 tiles (lqq, qoq), in parallel lanes.
O=$OUT/c4; mkdir -p $O; cp .devdeps/s50c4.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > /tmp/build.txt 2>&1) || { echo BUILD FAILED; tail /tmp/build.txt; exit 1; }
T0=$(date +%s)
QJIT_CACHE_DIR=/tmp/qS timeout 330 build-dev/qjit bench --scheme w4a8-lqq --sparsity 0.05 --no-peers --shapes 12288x4096,14336x4096,22016x4096,28672x4096,10240x8192,16384x8192,28672x8192,57344x8192 --m 32 --reps 10 \
  --variant "pipe=tma;tile=32x64x128;warps=1x4;stages=6;split=1;producer=wg;wu8=1" \
  --variant "pipe=tma;tile=32x64x128;warps=1x4;stages=8;split=1;producer=wg;wu8=1" \
  --variant "pipe=tma;tile=32x64x128;warps=1x4;stages=6;split=2;reduce=cluster;producer=wg;wu8=1" --csv $O/m32.csv > $O/m32.txt 2>&1
echo "bench rc=$? at $(( $(date +%s) - T0 )) s"; grep -iE "mismatch|not exact|error" $O/m32.txt | head -3
cd build-dev
run_lane() { QJIT_CACHE_DIR=/tmp/qt-$1 QJIT_TEST_SCHEMES=$2 QJIT_TEST_PIPES="$4" CK_RUN_CASE=$3 CK_DEFAULT_TIMEOUT=150 timeout 150 ./test_gpu > /tmp/gpu-$1.txt 2>&1; echo "rc=$?" >> /tmp/gpu-$1.txt; }
run_lane l0 w4a8-lqq sparse "tile=32x64x128;warps=1x4;stages=6;split=1;pipe=tma;producer=wg;wu8=1" &
run_lane l1 w4a8-lqq sparse "tile=32x64x128;warps=1x4;stages=8;split=1;pipe=tma;producer=wg;wu8=1" &
run_lane q0 w4a8-qoq sparse "tile=32x64x128;warps=1x4;stages=6;split=1;pipe=tma;producer=wg" &
wait
cd ..
for l in l0 l1 q0; do
  echo "== lane $l: $(tail -1 /tmp/gpu-$l.txt) exact $(grep -c 'acc exact' /tmp/gpu-$l.txt), configs: $(grep 'carry a residual' /tmp/gpu-$l.txt | awk '{print $2 $3}' | uniq -c | tr '\n' ' ')"
  grep -E ":F:|:E:|mismatch" /tmp/gpu-$l.txt | head -5
done | tee $O/gpu.txt
cat /tmp/gpu-*.txt > $O/gpu-all.txt
python3 - $O/m32.csv <<'P' | tee $O/summary.txt
import csv,sys,re
for r in csv.DictReader(open(sys.argv[1])):
    print(r['N'],r['K'],r['sparsity'],r['forced'],r['tokens_us'],re.sub(r'actq=kernel;arch=sm_90a;epi=f16;g=128;kernel=gemm;','',r['variant']))
P
echo "done at $(( $(date +%s) - T0 )) s"
