#!/usr/bin/env bash
# Session 22, call 2: w4ax-s in place (act-quant inplace=1, weights in the caller's order).
# Prediction: w4ax-s within ~0.3 us of w4a4 at M = 1/16 on 4096x11008, 8192x28672, 8192x8192
# (its activation kernel is now w4a4's one-part structure plus one byte of the INT8 set per 8 channels).
set -u
out=$OUT; T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi -L > $out/device.txt 2>&1; cat $out/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && timeout 240 cmake --build build-dev -j16 --target test_gpu qjit_cli qjit_static) > $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
gcc -O2 -I base -I codegen -I include -I runtime -I cache -I /usr/local/cuda/include .devdeps/tools/act_time.c build-dev/libqjit.a -L/usr/local/cuda/lib64 -lnvrtc -llua5.4 -lm -lpthread -ldl -o act_time >> $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
grep -ci warning $out/build.txt
stamp built
export QJIT_CACHE_DIR=/tmp/qc
(CK_RUN_CASE=w4axs timeout 330 ./build-dev/test_gpu > $out/gpu-w4axs.txt 2>&1; echo "rc=$?" >> $out/gpu-w4axs.txt) &
(QJIT_TEST_PIPES=no-forced-pipe CK_RUN_CASE=w4ax timeout 250 ./build-dev/test_gpu > $out/gpu-w4ax.txt 2>&1; echo "rc=$?" >> $out/gpu-w4ax.txt) &
wait
stamp gpu
grep -E "Checks|rc=|:F:|:E:|activations" $out/gpu-w4axs.txt $out/gpu-w4ax.txt | head -30
A="kernel=act-quant;arch=sm_90a"
timeout 40 ./act_time "$A;bits=4;threads=512" "$A;bits=4;ctas=3;threads=512" "$A;bits=4;ctas=7;threads=512" \
  "$A;bits=8+4;scales=1;inplace=1;threads=512" "$A;bits=8+4;scales=1;inplace=1;ctas=3;threads=512" "$A;bits=8+4;scales=1;inplace=1;ctas=7;threads=512" \
  > $out/act-time.txt 2>&1; echo "rc=$?" >> $out/act-time.txt
grep -E "M=  1|M= 16|rc=" $out/act-time.txt
stamp timed
B="./build-dev/qjit bench --scheme w4a4,w4ax-s,w4ax --no-peers --reps 10 --m 1,16,256 --shapes 4096x11008,8192x28672,8192x8192,4096x4096"
timeout 170 $B --csv $out/ab-inplace.csv > $out/ab-inplace.txt 2>&1; echo "rc=$?" >> $out/ab-inplace.txt
stamp bench
grep -E "^w4|rc=|WRONG|wrong|against|  M=" $out/ab-inplace.txt | head -60
