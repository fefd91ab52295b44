#!/bin/bash
# Session 51 call 2 (issues 16, 14): the few-token buckets (M <= 16) past 8192 rows, dense, swept. Call 1 found the
# table's multistage 16x64 tile at split 1 on 57344x8192 at M = 1 / 8 (the M <= 8 bucket's split rule: 896 CTAs
# < 4 x 132) at 93-98 us against 74-75 for the TMA 16x64 tile (8 stages, split 2 in a cluster) and 78 for the
# same multistage tile at split 2; and the M <= 16 bucket's fixed split 2 on 28672x4096 at 32.8 us against 25.0
# at split 1. The TMA tile at split 2 was 0.95 on 10240x8192 / 11008x4096, level on 12288x4096, 1.13 on
# 14336x4096 (448 CTAs: a wave and an eighth at three an SM). Sweep the candidates on nine layers past 8192 rows
# at M = 1 / 8 / 16 (LQQ; IS was within 3 % of LQQ's ordering in call 1), the decode pipe at M = 1 / 8, and
# Llama-2-7B's decode step as issue 16's baseline.
# Prediction: the best split follows the wave count (ceil(CTAs / (r x 132)) against CTAs / (r x 132)): a
# nearly whole last wave wins, a wave and a bit loses, for both pipes.
O=$OUT/c2; mkdir -p $O; cp .devdeps/s51c2.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli > /tmp/build.txt 2>&1) || { echo BUILD FAILED; tail /tmp/build.txt; exit 1; }
T0=$(date +%s)
SH=12288x4096,14336x4096,22016x4096,28672x4096,13824x5120,10240x8192,16384x8192,28672x8192,57344x8192
MS="pipe=multistage;tile=16x64x128;warps=1x4;stages=4"
TM="pipe=tma;tile=16x64x128;warps=1x4;stages=8;producer=wg;wu8=1"
QJIT_CACHE_DIR=/tmp/qD timeout 260 build-dev/qjit bench --scheme w4a8-lqq --no-peers --shapes $SH --m 1,8,16 --reps 10 \
  --variant "$MS;split=1" --variant "$MS;split=2" --variant "$MS;split=4" \
  --variant "$TM;split=1" --variant "$TM;split=2;reduce=cluster" --variant "$TM;split=4" --csv $O/sweep.csv > $O/sweep.txt 2>&1
echo "sweep rc=$? at $(( $(date +%s) - T0 )) s"
QJIT_CACHE_DIR=/tmp/qD timeout 100 build-dev/qjit bench --scheme w4a8-lqq --no-peers --shapes $SH --m 1,8 --reps 10 \
  --variant "pipe=decode;tile=8x16x64;warps=1x16;stages=4;split=1" --csv $O/decode.csv > $O/decode.txt 2>&1
echo "decode rc=$? at $(( $(date +%s) - T0 )) s"
QJIT_CACHE_DIR=/tmp/qD timeout 120 build-dev/qjit bench --scheme w4a8-lqq --layers 32 --m 1,4,16 --reps 10 > $O/step.txt 2>&1
echo "step rc=$? at $(( $(date +%s) - T0 )) s"; grep -iE "mismatch|not exact|error" $O/*.txt | head -5
