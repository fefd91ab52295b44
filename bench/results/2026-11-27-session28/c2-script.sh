#!/bin/bash
# Session 28 call 2: producer=wg (a producer warpgroup, setmaxnreg) on branch wip-producer-warp.
# 1. GPU suite's forced pipes narrowed to producer=wg (bit-exact, every scheme and group);
# 2. the registers the MMA warpgroups really use (SASS) for the 128x256 tile;
# 3. bench: producer=wg tiles against the table and the same tiles without it.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD
O=/tmp/o; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s28c2.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu >/dev/null || { echo BUILD FAILED; exit 1; }
Q=$root/build-dev/qjit
date
for c in pipes_a pipes_b; do
  ( cd build-dev && QJIT_TEST_PIPES=producer=wg QJIT_CACHE_DIR=/tmp/qt CK_RUN_CASE=$c CK_DEFAULT_TIMEOUT=300 timeout 200 ./test_gpu ) > $O/gpu-$c.txt 2>&1
  tail -1 $O/gpu-$c.txt
done
base="scheme=w4a8-lqq;g=128;arch=sm_90a;epi=f16;kernel=gemm;actq=kernel;pipe=tma"
for k in "tile=128x256x128;warps=1x8;stages=5;producer=wg" "tile=256x128x128;warps=2x4;stages=4;producer=wg" "tile=128x128x128;warps=1x8;stages=6;producer=wg"; do
  $Q gen "$base;$k" > /tmp/k.cu && nvcc -arch=sm_90a -cubin -Xptxas -v -o /tmp/k.cubin /tmp/k.cu 2>&1 | grep -E "registers|spill" > /tmp/v.txt
  echo "$k: $(tr '\n' ' ' < /tmp/v.txt) highest register in SASS: $(cuobjdump -sass /tmp/k.cubin | grep -oE '\bR[0-9]+\b' | tr -d R | sort -n | tail -1), STL: $(cuobjdump -sass /tmp/k.cubin | grep -c STL)" >> $O/sass.txt
done
cat $O/sass.txt
export QJIT_CACHE_DIR=/tmp/qp
V=()
for v in "pipe=tma;tile=128x128x128;warps=1x8;stages=4" "pipe=tma;tile=128x128x128;warps=1x8;stages=6;producer=wg" \
         "pipe=tma;tile=128x256x128;warps=1x8;stages=5" "pipe=tma;tile=128x256x128;warps=1x8;stages=5;producer=wg" \
         "pipe=tma;tile=128x256x128;warps=1x8;stages=6;producer=wg" \
         "pipe=tma;tile=256x128x128;warps=2x4;stages=4" "pipe=tma;tile=256x128x128;warps=2x4;stages=4;producer=wg" \
         "pipe=tma;tile=256x128x128;warps=2x4;stages=5;producer=wg"; do V+=(--variant "$v"); done
timeout 300 $Q bench --shapes 28672x4096,4096x4096,12288x4096,4096x14336 --m 128,256,512,1024,4096 --reps 20 "${V[@]}" --csv $O/producer.csv --json /tmp/j > $O/producer.txt 2>&1
echo "bench rc=$?"
date
tar -C $O -czf $OUT/c2.tgz .
