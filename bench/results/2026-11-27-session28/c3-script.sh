#!/bin/bash
# Session 28 call 3 (branch wip-producer-warp): producer=wg in the table past 512 tokens.
# 1. forced producer=wg pipes (every scheme), llama layers through the table (M up to 4096);
# 2. compute-sanitizer memcheck/racecheck/synccheck on one producer=wg pipe, small layer;
# 3. w8a8 and w4a8-qoq: 256x128 producer=wg against the 128x128 tile at M = 1024, 4096.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD
O=/tmp/o; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s28c3.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu >/dev/null || { echo BUILD FAILED; exit 1; }
Q=$root/build-dev/qjit
date
for c in pipes_a pipes_b; do
  ( cd build-dev && QJIT_TEST_PIPES=producer=wg QJIT_CACHE_DIR=/tmp/qt CK_RUN_CASE=$c CK_DEFAULT_TIMEOUT=300 timeout 150 ./test_gpu ) > $O/gpu-$c.txt 2>&1
  tail -1 $O/gpu-$c.txt
done
( cd build-dev && QJIT_CACHE_DIR=/tmp/qt CK_RUN_CASE=llama CK_DEFAULT_TIMEOUT=300 timeout 200 ./test_gpu ) > $O/gpu-llama.txt 2>&1
tail -1 $O/gpu-llama.txt
date
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck synccheck; do
  for c in pipes_a pipes_b; do
    ( cd build-dev && QJIT_TEST_SCHEMES=w4a8-lqq QJIT_TEST_PIPES="tile=128x64x128;warps=1x4;stages=6;split=5;pipe=tma;producer=wg" \
      QJIT_CACHE_DIR=/tmp/qt CK_FORK=no CK_RUN_CASE=$c CK_DEFAULT_TIMEOUT=300 timeout 100 $SAN --tool $tool ./test_gpu ) > $O/san-$tool-$c.txt 2>&1
    echo "$tool $c: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|Checks' $O/san-$tool-$c.txt | tr '\n' ' ')"
  done
done
date
export QJIT_CACHE_DIR=/tmp/qp
V=()
for v in "pipe=tma;tile=128x128x128;warps=1x8;stages=4" "pipe=tma;tile=256x128x128;warps=2x4;stages=4;producer=wg" \
         "pipe=tma;tile=128x256x128;warps=1x8;stages=4;producer=wg"; do V+=(--variant "$v"); done
timeout 200 $Q bench --scheme w8a8,w4a8-qoq --shapes 28672x4096,4096x4096,12288x4096,4096x14336 --m 512,1024,4096 --reps 20 "${V[@]}" --csv $O/w8qoq.csv --json /tmp/j > $O/w8qoq.txt 2>&1
echo "bench rc=$?"
date
tar -C $O -czf $OUT/c3.tgz .
