#!/usr/bin/env bash
# session 21, call 6: act-quant ctas=P (a token's rounds over P CTAs) -- GPU tests, the kernels alone, then the layers A/B against HEAD
set -u
out=$OUT; T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi -L > $out/device.txt 2>&1; cat $out/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && timeout 240 cmake --build build-dev -j16 --target test_gpu qjit_cli qjit_static) > $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
gcc -O2 -I base -I codegen -I include -I runtime -I cache -I /usr/local/cuda/include .devdeps/tools/act_time.c build-dev/libqjit.a -L/usr/local/cuda/lib64 -lnvrtc -llua5.4 -lm -lpthread -ldl -o act_time >> $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
stamp built
export QJIT_CACHE_DIR=/tmp/qc
(QJIT_TEST_PIPES=no-forced-pipe CK_RUN_CASE=w4axs timeout 230 ./build-dev/test_gpu > $out/gpu-w4axs.txt 2>&1; echo "rc=$?" >> $out/gpu-w4axs.txt) &
(QJIT_TEST_PIPES=no-forced-pipe CK_RUN_CASE=w4ax timeout 230 ./build-dev/test_gpu > $out/gpu-w4ax.txt 2>&1; echo "rc=$?" >> $out/gpu-w4ax.txt) &
(CK_RUN_CASE=misc timeout 230 ./build-dev/test_gpu > $out/gpu-misc.txt 2>&1; echo "rc=$?" >> $out/gpu-misc.txt) &
wait
stamp gpu
grep -E "Checks|rc=|:F:|:E:|bit-exact at K" $out/gpu-*.txt | head -30
A="kernel=act-quant;arch=sm_90a"
timeout 100 ./act_time "$A;bits=8;threads=512" "$A;bits=8;ctas=3;threads=512" "$A;bits=8;ctas=7;threads=512" "$A;bits=8;ctas=4;threads=512" \
  "$A;bits=8+4;scales=1;cache=8192;threads=512" "$A;bits=8+4;scales=1;cache=8192;ctas=2;threads=512" "$A;bits=8+4;scales=1;cache=8192;ctas=4;threads=512" \
  "$A;bits=8+4;scales=1;cache=16384;threads=512" "$A;bits=8+4;scales=1;cache=16384;ctas=6;threads=512" "$A;bits=8+4;scales=1;cache=16384;ctas=4;threads=512" \
  "$A;bits=8+4;scales=1;cache=32768;threads=512" "$A;bits=8+4;scales=1;cache=32768;ctas=8;threads=512" "$A;bits=8+4;scales=1;cache=32768;ctas=4;threads=512" > $out/act-time.txt 2>&1; echo "rc=$?" >> $out/act-time.txt
stamp timed
B="./build-dev/qjit bench --scheme w4a8-lqq,w4a4,w4ax-s --no-peers --reps 10 --m 1,16,64 --shapes 4096x4096,4096x11008,8192x28672,57344x8192"
timeout 170 $B --csv $out/ab-ctas.csv > $out/ab-ctas.txt 2>&1; echo "rc=$?" >> $out/ab-ctas.txt
stamp new
QJIT_TEMPLATE_PATH=$PWD/.devdeps/ab-head20/templates timeout 150 $B --csv $out/ab-head.csv > $out/ab-head.txt 2>&1; echo "rc=$?" >> $out/ab-head.txt
stamp head
grep -E "rc=|WRONG|wrong|against" $out/ab-ctas.txt $out/ab-head.txt | head
