#!/bin/bash
# Session 31 call 2: explicit dequantization (excp=1). (1) Exactness: every forced excp pipe, every scheme group that
# takes it (pipes_a, pipes_b with QJIT_TEST_PIPES=excp=1: 320x1536 at M = 5/77/300, 2048x1024 persistent at
# M = 77/1000); (2) the pipeline comparison: imfp and excp forced at every M on the default shapes (GEMM alone and
# forward); (3) compute-sanitizer memcheck/racecheck/synccheck on the excp pipes, w4a8-lqq.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD; T0=$(date +%s)
O=/tmp/o; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s31c2.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build.txt 2>&1 || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
Q=$root/build-dev/qjit
echo "built $(( $(date +%s) - T0 )) s"
for c in pipes_a pipes_b; do
  (cd build-dev && QJIT_TEST_PIPES="excp=1" QJIT_CACHE_DIR=/tmp/qt-$c CK_RUN_CASE=$c CK_DEFAULT_TIMEOUT=600 timeout 170 ./test_gpu > $O/gpu-$c.txt 2>&1; echo "rc=$?" >> $O/gpu-$c.txt) &
done
wait
for c in pipes_a pipes_b; do echo "== $c: $(grep -E 'Checks' $O/gpu-$c.txt) $(tail -1 $O/gpu-$c.txt) exact lines $(grep -c 'acc exact' $O/gpu-$c.txt) refused $(grep -c 'refused' $O/gpu-$c.txt)"; grep -E ":F:|:E:" $O/gpu-$c.txt | head -5 | cut -c1-400; done
echo "tests done at $(( $(date +%s) - T0 )) s"
V1="pipe=tma;tile=128x256x128;warps=1x8;stages=4;producer=wg;persist=1"
V2="pipe=tma;tile=256x128x128;warps=2x4;stages=3;producer=wg;persist=1"
V3="pipe=tma;tile=256x128x128;warps=2x4;stages=3;producer=wg;persist=1;excp=1"
V4="pipe=tma;tile=128x256x128;warps=1x8;stages=4;producer=wg;excp=1"
QJIT_CACHE_DIR=/tmp/qb timeout 260 $Q bench --no-peers --m 1,16,128,256,512,1024,4096 --reps 10 --variant "$V1" --variant "$V2" --variant "$V3" --variant "$V4" --csv $O/pipes.csv --json $O/pipes.json > $O/pipes.txt 2>&1
echo "bench rc=$? at $(( $(date +%s) - T0 )) s"
sed -n '/^forced variants/,/^$/p' $O/pipes.txt | head -60
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck synccheck racecheck; do
  left=$(( 580 - ($(date +%s) - T0) )); [ $left -lt 30 ] && break
  (cd build-dev && QJIT_TEST_SCHEMES=w4a8-lqq QJIT_TEST_PIPES="excp=1" QJIT_CACHE_DIR=/tmp/qs CK_FORK=no CK_RUN_CASE=pipes_a CK_DEFAULT_TIMEOUT=600 timeout $(( left < 120 ? left : 120 )) $SAN --tool $tool ./test_gpu) > $O/san-$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'Checks|ERROR SUMMARY|RACECHECK SUMMARY' $O/san-$tool.txt | tr '\n' ' ') exact $(grep -c 'acc exact' $O/san-$tool.txt) at $(( $(date +%s) - T0 )) s"
done
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c2.tgz .
