#!/usr/bin/env bash
# session 25, call 2: with the launch trigger + spread (final code): per-shape candidates in the 128-layer step
# at M = 1, 4 (decode vs multistage on the wide layers), 16, 64; then the 32-layer step with peers
set -u
out=$OUT; T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi -L > $out/device.txt 2>&1
export PATH=/usr/local/cuda/bin:$PATH QJIT_CACHE_DIR=/tmp/qc
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && timeout 240 cmake --build build-dev -j16 --target qjit_cli test_gpu) > $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
grep -c -i warning $out/build.txt
stamp built
C='actq=kernel;arch=sm_90a;epi=f16;g=128;kernel=gemm;reduce=global;scheme=w4a8-lqq'
run() { # shape ms label [variant]
  local sh=$1 ms=$2 lab=$3; shift 3
  echo "######## $sh $ms $lab $*" >> $out/tune.txt
  timeout 60 ./build-dev/qjit bench --layers 128 --shapes $sh --scheme lqq --m $ms --no-peers --reps 10 "$@" > /tmp/t.txt 2>&1
  cat /tmp/t.txt >> $out/tune.txt
  printf "%-11s %-22s %s\n" $sh $lab "$(grep -E '^w4a8-lqq tokens in' /tmp/t.txt | awk '{printf "M=%s %s (%s)  ", $(NF-5), $(NF-4), $(NF-1)}')"
}
for sh in 12288x4096 22016x4096; do
  run $sh 1,4 default
  run $sh 1,4 d8x16-w16-s4 --variant "$C;pipe=decode;split=1;stages=4;tile=8x16x64;warps=1x16"
  run $sh 1,4 d8x32-w16-s4 --variant "$C;pipe=decode;split=1;stages=4;tile=8x32x64;warps=1x16"
  run $sh 1,4 d8x16-w8-s8 --variant "$C;pipe=decode;split=1;stages=8;tile=8x16x64;warps=1x8"
  run $sh 16 default
  run $sh 16 d16x32-w16-s4 --variant "$C;pipe=decode;split=1;stages=4;tile=16x32x64;warps=1x16"
  run $sh 16 d16x32-w8-s4 --variant "$C;pipe=decode;split=1;stages=4;tile=16x32x64;warps=1x8"
done
stamp small
for sh in 12288x4096 22016x4096; do
  run $sh 64 default
  run $sh 64 tma64x128-s2 --variant "$C;pipe=tma;split=2;stages=4;tile=64x128x128;warps=1x8"
  run $sh 64 tma64x128-s1 --variant "$C;pipe=tma;split=1;stages=4;tile=64x128x128;warps=1x8"
  run $sh 64 wg64x128-s2 --variant "$C;pipe=wgmma;split=2;stages=4;tile=64x128x128;warps=1x8"
  run $sh 64 tma64x64-s2 --variant "$C;pipe=tma;split=2;stages=8;tile=64x64x128;warps=1x4"
done
for sh in 4096x4096 4096x11008; do
  run $sh 64 default
  run $sh 64 tma64x64-s2 --variant "$C;pipe=tma;split=2;stages=8;tile=64x64x128;warps=1x4"
  run $sh 64 tma64x128-s4 --variant "$C;pipe=tma;split=4;stages=4;tile=64x128x128;warps=1x8"
done
stamp m64
grep -iE "error|refused|invalid" $out/tune.txt | sort | uniq | head
timeout 150 ./build-dev/qjit bench --layers 32 --scheme lqq,w8a8 --reps 10 --csv $out/step.csv > $out/step.txt 2>&1; echo "rc=$?" >> $out/step.txt
grep -A30 "^summary" $out/step.txt | head -40
stamp step
