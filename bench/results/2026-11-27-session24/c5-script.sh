#!/usr/bin/env bash
# session 24, call 5: decode-pipe candidates for w4a8-lqq at M = 1, 4 in the 128-layer step of each shape
set -u
out=$OUT; T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi -L > $out/device.txt 2>&1
export PATH=/usr/local/cuda/bin:$PATH QJIT_CACHE_DIR=/tmp/qc
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && timeout 240 cmake --build build-dev -j16 --target qjit_cli) > $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
stamp built
B='actq=kernel;arch=sm_90a;epi=f16;g=128;kernel=gemm;pipe=decode;reduce=global;scheme=w4a8-lqq;split=1'
run() { # shape label [variant]
  local sh=$1 lab=$2; shift 2
  echo "######## $sh $lab $*" >> $out/tune.txt
  timeout 60 ./build-dev/qjit bench --layers 128 --shapes $sh --scheme lqq --m 1,4 --no-peers --reps 10 "$@" > /tmp/t.txt 2>&1
  cat /tmp/t.txt >> $out/tune.txt
  printf "%-11s %-22s %s\n" $sh $lab "$(grep -E '^w4a8-lqq tokens in' /tmp/t.txt | awk '{printf "M=%s %s (%s)  ", $(NF-5), $(NF-4), $(NF-1)}')"
}
for sh in 12288x4096 22016x4096 4096x4096 4096x11008; do
  run $sh default
  run $sh d8x16-w16-s4 --variant "$B;stages=4;tile=8x16x64;warps=1x16"
  run $sh d8x16-w8-s4 --variant "$B;stages=4;tile=8x16x64;warps=1x8"
  run $sh d8x16-w16-s8 --variant "$B;stages=8;tile=8x16x64;warps=1x16"
  run $sh d8x32-w16-s4 --variant "$B;stages=4;tile=8x32x64;warps=1x16"
done
stamp done
grep -iE "error|refused|invalid" $out/tune.txt | sort | uniq | head
