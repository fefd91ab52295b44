#!/bin/bash
# Session 51 call 1 (dense few-token tiles past 8192 rows; issues 14 and 16): session 50 found the TMA pipe's
# 32-token tile with a producer warpgroup ahead of the cp.async tile at M = 17..32 on every layer of 14336 rows
# and more (0.81-0.93, landed). At M <= 16 past 8192 rows the table runs the multistage 16x64 tile (split auto /
# 2), while session 42 had the sparse 16-token TMA tile at 6 stages faster at M = 1 on 57344x8192 than the
# dense layer (86.7 against 93.3 us). Force the 16-token TMA tile (producer warpgroup) of 64 and 128 rows at 8
# stages, split 2 in a cluster, and of 64 at split 1 (the dense 16x64 tile at 6 stages is refused: 5 CTAs an SM
# leave its MMA warpgroup 72 registers), on the dense layers at M = 1 / 8 / 16 past 8192 rows, for LQQ and IS
# (the per-group rescale's registers); then Llama-2-7B's decode step (qjit bench --layers 32, M = 1..16) as the
# baseline of issue 16's target (>= 0.8 of the 4-bit floor at M = 1..4; its 11008x4096 and 12288x4096 are past
# 8192 rows).
# Prediction: the TMA tile 0.85-0.95 of the multistage one on the layers of 14336 rows and more at M = 1..16,
# level at 10240..12288 rows.
# Session 51 call 1: next-s51c1.sh (dense, without the decode step) and next-s51c3.sh (sparse) in one call.
O=$OUT/c1; mkdir -p $O; cp .devdeps/s51c1.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli > /tmp/build.txt 2>&1) || { echo BUILD FAILED; tail /tmp/build.txt; exit 1; }
T0=$(date +%s)
for s in w4a8-lqq w4a8-is; do
  W=""; [ $s = w4a8-lqq ] && W=";wu8=1"   # the table's unsigned form for LQQ (a forced key without it is another kernel)
  QJIT_CACHE_DIR=/tmp/qD timeout 170 build-dev/qjit bench --scheme $s --no-peers --shapes 11008x4096,12288x4096,14336x4096,10240x8192,57344x8192 --m 1,8,16 --reps 10 \
    --variant "pipe=tma;tile=16x64x128;warps=1x4;stages=8;split=2;reduce=cluster;producer=wg$W" \
    --variant "pipe=tma;tile=16x128x128;warps=1x4;stages=8;split=2;reduce=cluster;producer=wg$W" \
    --variant "pipe=tma;tile=16x64x128;warps=1x4;stages=8;split=1;producer=wg$W" --csv $O/few-$s.csv > $O/few-$s.txt 2>&1
  echo "$s rc=$? at $(( $(date +%s) - T0 )) s"
done
# session 50's next-s51c3.sh: the sparse layers at M <= 16 past 8192 rows
QJIT_CACHE_DIR=/tmp/qS timeout 200 build-dev/qjit bench --scheme w4a8-lqq --sparsity 0.05 --no-peers --shapes 11008x4096,12288x4096,14336x4096,28672x4096,10240x8192,57344x8192 --m 1,8,16 --reps 10 \
  --variant "pipe=tma;tile=16x64x128;warps=1x4;stages=8;split=1;producer=wg;wu8=1" \
  --variant "pipe=tma;tile=16x128x128;warps=1x4;stages=8;split=2;reduce=cluster;producer=wg;wu8=1" --csv $O/sparse-m16.csv > $O/sparse-m16.txt 2>&1
echo "sparse rc=$? at $(( $(date +%s) - T0 )) s"; grep -iE "mismatch|not exact|error" $O/*.txt | head -5
python3 - $O <<'P' | tee $O/summary.txt
import csv,sys,re,glob
for f in sorted(glob.glob(sys.argv[1]+'/*.csv')):
    for r in csv.DictReader(open(f)):
        print(r['scheme'], r['N'], r['K'], r['M'], r.get('sparsity',''), r['forced'], r['tokens_us'], re.sub(r'actq=kernel;arch=sm_90a;epi=f16;(g=128;)?kernel=gemm;', '', r['variant']))
P
