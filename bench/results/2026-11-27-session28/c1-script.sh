#!/bin/bash
# Prepared in session 27 for the next device call: the branch wip-producer-warp
# (make the tree with: git archive --format=tar.gz -o .devdeps/tree.tgz wip-producer-warp).
# 1. the GPU suite's forced pipes narrowed to producer=warp (bit-exact, every scheme and group);
# 2. producer=warp against the same tiles without it (bench checks bit-exactness first).
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD
O=/tmp/o; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s28c1.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu >/dev/null || { echo BUILD FAILED; exit 1; }
Q=$root/build-dev/qjit
date
for c in pipes_a pipes_b; do
  ( cd build-dev && QJIT_TEST_PIPES=producer=warp QJIT_CACHE_DIR=/tmp/qt CK_RUN_CASE=$c CK_DEFAULT_TIMEOUT=300 timeout 200 ./test_gpu ) > $O/gpu-$c.txt 2>&1
  tail -2 $O/gpu-$c.txt
done
export QJIT_CACHE_DIR=/tmp/qp
V=()
for v in "pipe=tma;tile=128x128x128;warps=1x8;stages=4" "pipe=tma;tile=128x128x128;warps=1x8;stages=4;producer=warp" \
         "pipe=tma;tile=128x128x128;warps=1x8;stages=6" "pipe=tma;tile=128x128x128;warps=1x8;stages=6;producer=warp" \
         "pipe=tma;tile=64x128x128;warps=1x4;stages=4;split=2;reduce=cluster" "pipe=tma;tile=64x128x128;warps=1x4;stages=4;split=2;reduce=cluster;producer=warp"; do V+=(--variant "$v"); done
timeout 150 $Q bench --shapes 4096x4096,28672x4096 --no-peers --m 64,128,512,4096 --reps 20 "${V[@]}" --csv $O/producer.csv --json /tmp/j > $O/producer.txt 2>&1
echo "bench rc=$?"
date
tar -C $O -czf $OUT/c1.tgz .
