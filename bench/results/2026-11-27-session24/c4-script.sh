#!/usr/bin/env bash
# session 24, call 4: where the decode step loses to the floor -- each Llama-2-7B linear alone as a 128-layer step
# (tokens in, graph), and the variant keys dispatch picks (single-call bench CSV)
set -u
out=$OUT; T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi -L > $out/device.txt 2>&1
export PATH=/usr/local/cuda/bin:$PATH QJIT_CACHE_DIR=/tmp/qc
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && timeout 240 cmake --build build-dev -j16 --target qjit_cli) > $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
stamp built
for sh in 12288x4096 4096x4096 22016x4096 4096x11008; do
  timeout 100 ./build-dev/qjit bench --layers 128 --shapes $sh --scheme lqq,w8a8 --m 1,4,16,64 --reps 10 > /tmp/one-$sh.txt 2>&1
  stamp $sh
done
for sh in 12288x4096 4096x4096 22016x4096 4096x11008; do echo "######## $sh"; cat /tmp/one-$sh.txt; done > $out/per-shape.txt
for sh in 12288x4096 4096x4096 22016x4096 4096x11008; do echo "== $sh"; grep -E "^(cublas-fp8|w4a8-lqq tokens|w8a8 tokens|w4a8-lqq  *weights|w8a8  *weights)" /tmp/one-$sh.txt; done
timeout 120 ./build-dev/qjit bench --scheme lqq,w8a8 --m 1,4,16,64 --shapes 12288x4096,4096x4096,22016x4096,4096x11008 --no-peers --reps 20 --csv $out/keys.csv > $out/single.txt 2>&1
cut -d, -f1-4,11,13,17 $out/keys.csv
stamp done
