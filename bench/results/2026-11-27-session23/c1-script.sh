#!/usr/bin/env bash
# session 23, call 1: the tokens entry (quantize / forward_tokens) -- build, default set, GPU cases in parallel
set -u
out=$OUT; T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi -L > $out/device.txt 2>&1; cat $out/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && timeout 240 cmake --build build-dev -j16 --target qjit_cli test_gpu) > $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
grep -c -i "warning" $out/build.txt
stamp built
export QJIT_CACHE_DIR=/tmp/qc
./build-dev/qjit compile --defaults > $out/compile.txt 2>&1; tail -1 $out/compile.txt
stamp defaults
for c in misc llama pipes_a pipes_b w4ax w4axs odd; do
  (CK_RUN_CASE=$c timeout $(( 560 - ($(date +%s) - T0) )) ./build-dev/test_gpu > $out/gpu-$c.txt 2>&1; echo "rc=$?" >> $out/gpu-$c.txt) &
done
wait
stamp gpu
for c in misc llama pipes_a pipes_b w4ax w4axs odd; do echo "== $c: $(grep -E 'Checks' $out/gpu-$c.txt) $(tail -1 $out/gpu-$c.txt)"; grep -E ":F:|:E:" $out/gpu-$c.txt | head -5; done
