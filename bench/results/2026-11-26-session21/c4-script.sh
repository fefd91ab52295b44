#!/usr/bin/env bash
# session 21, call 4: the activation kernels alone (cluster vs one CTA a token), L2 flushed before each launch
set -u
out=$OUT; T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi -L > $out/device.txt 2>&1; cat $out/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && timeout 240 cmake --build build-dev -j16 --target qjit_static) > $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
gcc -O2 -I base -I codegen -I include -I runtime -I cache -I /usr/local/cuda/include .devdeps/tools/act_time.c build-dev/libqjit.a -L/usr/local/cuda/lib64 -lnvrtc -llua5.4 -lm -lpthread -ldl -o act_time >> $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
stamp built
export QJIT_CACHE_DIR=/tmp/qc
A="kernel=act-quant;bits=8+4;scales=1;arch=sm_90a"
timeout 200 ./act_time "$A;cache=8192;threads=512" "$A;cache=8192;cluster=8;threads=256" "$A;cache=8192;cluster=4;threads=512" "$A;cache=8192;cluster=2;threads=512" \
  "$A;cache=16384;threads=512" "$A;cache=16384;cluster=8;threads=512" "$A;cache=16384;cluster=4;threads=512" \
  "$A;cache=32768;threads=512" "$A;cache=32768;cluster=8;threads=512" "$A;cache=32768;cluster=4;threads=512" "$A;threads=512" > $out/act-time.txt 2>&1; echo "rc=$?" >> $out/act-time.txt
cat $out/act-time.txt
stamp timed
