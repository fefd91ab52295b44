#!/usr/bin/env bash
# session 21, call 5: the one-part activation kernels alone at K = 4096, 11008, 28672 (is one SM per token the limit?)
set -u
out=$OUT; T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi -L > $out/device.txt 2>&1; cat $out/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && timeout 240 cmake --build build-dev -j16 --target qjit_static) > $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
gcc -O2 -I base -I codegen -I include -I runtime -I cache -I /usr/local/cuda/include .devdeps/tools/act_time.c build-dev/libqjit.a -L/usr/local/cuda/lib64 -lnvrtc -llua5.4 -lm -lpthread -ldl -o act_time >> $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
stamp built
export QJIT_CACHE_DIR=/tmp/qc
timeout 100 ./act_time "kernel=act-quant;bits=8;threads=512;arch=sm_90a" "kernel=act-quant;bits=4;threads=512;arch=sm_90a" "kernel=act-quant;bits=8;threads=128;arch=sm_90a" > $out/act-time1.txt 2>&1; echo "rc=$?" >> $out/act-time1.txt
cat $out/act-time1.txt
stamp timed
