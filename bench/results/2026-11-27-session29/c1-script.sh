#!/bin/bash
# Session 29 call 1: persist=1 (persistent TMA kernel with the producer warpgroup).
# 1. SASS of the persistent kernels (highest register, local memory);
# 2. GPU suite's forced pipes narrowed to producer=wg (the persistent ones included), pipes_a and pipes_b in parallel;
# 3. bench: persistent tiles against the table's 256x128 producer tile, w4a8-lqq.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD; T0=$(date +%s)
O=/tmp/o; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s29c1.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build.txt 2>&1 || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
Q=$root/build-dev/qjit
base="scheme=w4a8-lqq;g=128;arch=sm_90a;epi=f16;kernel=gemm;actq=kernel;pipe=tma"
for k in "tile=256x128x128;warps=2x4;stages=3;producer=wg;persist=1" "tile=128x256x128;warps=1x8;stages=4;producer=wg;persist=1" "tile=256x128x128;warps=2x4;stages=4;producer=wg"; do
  $Q gen "$base;$k" > /tmp/k.cu && nvcc -arch=sm_90a -cubin -Xptxas -v -o /tmp/k.cubin /tmp/k.cu 2>&1 | grep -E "registers|spill" > /tmp/v.txt
  echo "$k: $(tr '\n' ' ' < /tmp/v.txt) highest register in SASS: $(cuobjdump -sass /tmp/k.cubin | grep -oE '\bR[0-9]+\b' | tr -d R | sort -n | tail -1), STL: $(cuobjdump -sass /tmp/k.cubin | grep -c STL)" >> $O/sass.txt
done
cat $O/sass.txt
for c in pipes_a pipes_b; do
  (cd build-dev && QJIT_TEST_PIPES=producer=wg QJIT_CACHE_DIR=/tmp/qt-$c CK_RUN_CASE=$c CK_DEFAULT_TIMEOUT=600 timeout 260 ./test_gpu > $O/gpu-$c.txt 2>&1; echo "rc=$?" >> $O/gpu-$c.txt) &
done
wait
for c in pipes_a pipes_b; do echo "== $c: $(grep -E 'Checks' $O/gpu-$c.txt) $(tail -1 $O/gpu-$c.txt)"; grep -E ":F:|:E:" $O/gpu-$c.txt | head -5 | cut -c1-400; done
echo "tests done at $(( $(date +%s) - T0 )) s"
export QJIT_CACHE_DIR=/tmp/qp
V=()
for v in "pipe=tma;tile=256x128x128;warps=2x4;stages=4;producer=wg" "pipe=tma;tile=256x128x128;warps=2x4;stages=3;producer=wg" \
         "pipe=tma;tile=256x128x128;warps=2x4;stages=3;producer=wg;persist=1" "pipe=tma;tile=256x128x128;warps=2x4;stages=3;producer=wg;persist=1;band=1" \
         "pipe=tma;tile=128x256x128;warps=1x8;stages=5;producer=wg" "pipe=tma;tile=128x256x128;warps=1x8;stages=4;producer=wg;persist=1" \
         "pipe=tma;tile=128x128x128;warps=1x8;stages=6;producer=wg;persist=1"; do V+=(--variant "$v"); done
timeout $(( 585 - ($(date +%s) - T0) )) $Q bench --shapes 28672x4096,4096x14336,4096x4096 --m 256,512,1024,4096 --reps 10 --no-peers "${V[@]}" --csv $O/persist.csv --json /tmp/j > $O/persist.txt 2>&1
echo "bench rc=$?"
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c1.tgz .
