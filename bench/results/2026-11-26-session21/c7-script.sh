#!/usr/bin/env bash
# session 21, call 7: the final tree (ctas=P up to 16 tokens, P >= 3): Llama and odd shapes through dispatch, bit-exact
set -u
out=$OUT; T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi -L > $out/device.txt 2>&1; cat $out/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && timeout 240 cmake --build build-dev -j16 --target test_gpu) > $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
stamp built
export QJIT_CACHE_DIR=/tmp/qc
(CK_RUN_CASE=llama timeout 360 ./build-dev/test_gpu > $out/gpu-llama.txt 2>&1; echo "rc=$?" >> $out/gpu-llama.txt) &
(CK_RUN_CASE=odd timeout 360 ./build-dev/test_gpu > $out/gpu-odd.txt 2>&1; echo "rc=$?" >> $out/gpu-odd.txt) &
wait
stamp gpu
grep -cE "acc exact" $out/gpu-llama.txt $out/gpu-odd.txt
grep -E "Checks|rc=|:F:|:E:|differ|mismatch" $out/gpu-llama.txt $out/gpu-odd.txt | head -20
