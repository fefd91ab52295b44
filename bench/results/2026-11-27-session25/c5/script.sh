#!/usr/bin/env bash
# session 25, call 5 (final code): the remaining GPU cases in parallel
set -u
out=$OUT; T0=$(date +%s); root=$PWD
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi -L > $out/device.txt 2>&1; cat $out/device.txt
export PATH=/usr/local/cuda/bin:$PATH QJIT_CACHE_DIR=/tmp/qc
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && timeout 240 cmake --build build-dev -j16 --target qjit_cli test_gpu) > $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
grep -c -i warning $out/build.txt
stamp built
run_case() { # name case schemes
  (QJIT_TEST_SCHEMES=$3 CK_RUN_CASE=$2 timeout $(( 540 - ($(date +%s) - T0) )) ./build-dev/test_gpu > /tmp/gpu-$1.txt 2>&1; echo "rc=$?" >> /tmp/gpu-$1.txt) &
}
C="llama odd w4ax w4axs int4_mma sparse_llama bf16-lqq bf16-qoq bf16-is bf16-rest"
run_case llama llama ""; run_case odd odd ""; run_case w4ax w4ax ""; run_case w4axs w4axs ""; run_case int4_mma int4_mma ""
run_case sparse_llama sparse_llama ""
run_case bf16-lqq bf16 w4a8-lqq; run_case bf16-qoq bf16 w4a8-qoq; run_case bf16-is bf16 w4a8-is; run_case bf16-rest bf16 w8a8,w4a4,w4ax,w4ax-s
wait
stamp gpu
for c in $C; do echo "== $c: $(grep -E 'Checks' /tmp/gpu-$c.txt) $(tail -1 /tmp/gpu-$c.txt) exact $(grep -c exact /tmp/gpu-$c.txt)"; grep -E ":F:|:E:" /tmp/gpu-$c.txt | head -5; done
for c in $C; do echo "######## $c"; cat /tmp/gpu-$c.txt; done > $out/gpu-cases.txt
