#!/usr/bin/env bash
# Session 22, call 7: call 6 (the in-place kernel's maxima in FP16, only the chunks a row has) with its sign bits mended
# (call 6: the part bits were multiplied with the bits of other chunks: carries into bit 31; scales wrong).
# Prediction: the in-place kernel within ~0.3 us of the one-part one at M <= 64, ~10 % at M = 1024; w4ax-s within 3 % of w4a4 on table a.
set -u
out=$OUT; T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi -L > $out/device.txt 2>&1; cat $out/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && timeout 240 cmake --build build-dev -j16 --target test_gpu qjit_cli qjit_static) > $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
gcc -O2 -I base -I codegen -I include -I runtime -I cache -I /usr/local/cuda/include .devdeps/tools/act_time.c build-dev/libqjit.a -L/usr/local/cuda/lib64 -lnvrtc -llua5.4 -lm -lpthread -ldl -o act_time >> $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
grep -ci warning $out/build.txt
stamp built
export QJIT_CACHE_DIR=/tmp/qc
A="kernel=act-quant;arch=sm_90a"
timeout 60 ./act_time "$A;bits=4;ctas=3;threads=512" "$A;bits=4;ctas=7;threads=512" \
  "$A;bits=8+4;scales=1;inplace=1;ctas=3;threads=512" "$A;bits=8+4;scales=1;inplace=1;ctas=7;threads=512" \
  > $out/act-time.txt 2>&1; echo "rc=$?" >> $out/act-time.txt
grep -E "M=  1|M= 16|rc=" $out/act-time.txt
stamp timed
(QJIT_TEST_PIPES=no-forced-pipe CK_RUN_CASE=w4axs timeout 200 ./build-dev/test_gpu > $out/gpu-w4axs.txt 2>&1; echo "rc=$?" >> $out/gpu-w4axs.txt)
stamp gpu
grep -E "Checks|rc=|:F:|:E:|activations" $out/gpu-w4axs.txt | head
timeout 320 ./build-dev/qjit bench --scheme w4a8-lqq,w4a4,w4ax,w4ax-s --no-peers --reps 20 --shapes 12288x4096,22016x4096,4096x11008,4096x4096 --csv $out/table-a.csv > $out/table-a.txt 2>&1; echo "rc=$?" >> $out/table-a.txt
stamp table
grep -E "rc=|WRONG|wrong|against|  M=" $out/table-a.txt | head -60
