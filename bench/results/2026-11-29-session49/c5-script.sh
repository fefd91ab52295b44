#!/bin/bash
# Session 49 call 5 (issue 14): exactness of the landed cursor (8f62e62) where call 3's lanes stopped: the TMA
# room pipes (split 2..5, persistent; the rings were covered) on the sparse configurations 3..5 (qoq rho 0.01
# 32x128 blocks, qoq g=64 rho 1 64x64, lqq rho 1 128x128), with 0..2 again on the lqq lanes. Nine lanes at once
# (compile-bound), each a third or a sixth of the 21 pipes.
T0=$(date +%s)
O=$OUT/c5; mkdir -p $O; cp .devdeps/s49c5.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/gpu.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target test_gpu > /tmp/build.txt 2>&1) || { echo BUILD FAILED; tail /tmp/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
cd build-dev
run_lane() { QJIT_CACHE_DIR=/tmp/qt-$1 QJIT_TEST_SCHEMES=$2 QJIT_TEST_PIPES="$3" CK_RUN_CASE=sparse CK_DEFAULT_TIMEOUT=110 timeout 110 ./test_gpu > /tmp/gpu-$1.txt 2>&1; echo "rc=$?" >> /tmp/gpu-$1.txt; }
run_lane q0 w4a8-qoq "tile=64x128x128;warps=2x4;stages=5;split=2;pipe=tma,tile=128x64x128;warps=1x4;stages=8;split=4;pipe=tma;reduce=cluster,tile=128x128x128;warps=1x8;stages=6;split=2;pipe=tma;reduce=cluster;producer=wg,tile=256x128x128;warps=2x4;stages=4;split=3;pipe=tma;producer=wg,tile=256x128x128;warps=2x4;stages=3;pipe=tma;producer=wg;persist=1,tile=128x128x128;warps=2x4;stages=4;pipe=tma;producer=wg;persist=1;pingpong=1,tile=256x128x128;warps=1x8;stages=5;split=3;pipe=tma;producer=wg;wu8=1,tile=32x64x128;warps=1x4;stages=8;split=2;pipe=tma;reduce=cluster;producer=wg" &
run_lane q1 w4a8-qoq "tile=128x128x128;warps=1x8;stages=4;split=2;pipe=tma;reduce=cluster,tile=128x64x128;warps=1x4;stages=6;split=5;pipe=tma,tile=128x64x128;warps=1x4;stages=6;split=5;pipe=tma;producer=wg,tile=64x64x128;warps=1x4;stages=8;split=2;pipe=tma;reduce=cluster;producer=wg,tile=128x64x128;warps=1x4;stages=6;pipe=tma;producer=wg;persist=1,tile=64x128x128;warps=2x4;stages=5;split=2;pipe=tma;wu8=1,tile=16x64x128;warps=1x4;stages=8;split=2;pipe=tma;reduce=cluster;producer=wg" &
run_lane q2 w4a8-qoq "tile=64x128x128;warps=2x4;stages=4;split=3;pipe=tma;reduce=cluster,tile=64x128x128;warps=2x4;stages=8;split=2;pipe=tma;producer=wg,tile=128x256x128;warps=1x8;stages=4;split=2;pipe=tma;producer=wg,tile=128x64x128;warps=1x4;stages=8;split=2;pipe=tma;reduce=cluster;producer=wg;wu8=1,tile=128x128x128;warps=1x8;stages=4;pipe=tma;producer=wg;persist=1;excp=1,tile=128x128x128;warps=1x8;stages=6;split=2;pipe=tma;reduce=cluster;producer=wg;wu8=1,tile=16x64x128;warps=1x4;stages=6;split=2;pipe=tma;reduce=cluster;producer=wg" &
run_lane l0 w4a8-lqq "tile=64x128x128;warps=2x4;stages=5;split=2;pipe=tma,tile=128x128x128;warps=1x8;stages=6;split=2;pipe=tma;reduce=cluster;producer=wg,tile=256x128x128;warps=2x4;stages=3;pipe=tma;producer=wg;persist=1,tile=256x128x128;warps=1x8;stages=5;split=3;pipe=tma;producer=wg;wu8=1" &
run_lane l1 w4a8-lqq "tile=128x128x128;warps=1x8;stages=4;split=2;pipe=tma;reduce=cluster,tile=128x64x128;warps=1x4;stages=6;split=5;pipe=tma;producer=wg,tile=128x64x128;warps=1x4;stages=6;pipe=tma;producer=wg;persist=1,tile=16x64x128;warps=1x4;stages=8;split=2;pipe=tma;reduce=cluster;producer=wg" &
run_lane l2 w4a8-lqq "tile=64x128x128;warps=2x4;stages=4;split=3;pipe=tma;reduce=cluster,tile=128x256x128;warps=1x8;stages=4;split=2;pipe=tma;producer=wg,tile=128x128x128;warps=1x8;stages=4;pipe=tma;producer=wg;persist=1;excp=1,tile=16x64x128;warps=1x4;stages=6;split=2;pipe=tma;reduce=cluster;producer=wg" &
run_lane l3 w4a8-lqq "tile=128x64x128;warps=1x4;stages=8;split=4;pipe=tma;reduce=cluster,tile=256x128x128;warps=2x4;stages=4;split=3;pipe=tma;producer=wg,tile=128x128x128;warps=2x4;stages=4;pipe=tma;producer=wg;persist=1;pingpong=1,tile=32x64x128;warps=1x4;stages=8;split=2;pipe=tma;reduce=cluster;producer=wg" &
run_lane l4 w4a8-lqq "tile=128x64x128;warps=1x4;stages=6;split=5;pipe=tma,tile=64x64x128;warps=1x4;stages=8;split=2;pipe=tma;reduce=cluster;producer=wg,tile=64x128x128;warps=2x4;stages=5;split=2;pipe=tma;wu8=1" &
run_lane l5 w4a8-lqq "tile=64x128x128;warps=2x4;stages=8;split=2;pipe=tma;producer=wg,tile=128x64x128;warps=1x4;stages=8;split=2;pipe=tma;reduce=cluster;producer=wg;wu8=1,tile=128x128x128;warps=1x8;stages=6;split=2;pipe=tma;reduce=cluster;producer=wg;wu8=1" &
wait
cd ..
for l in q0 q1 q2 l0 l1 l2 l3 l4 l5; do
  echo "== lane $l: $(tail -1 /tmp/gpu-$l.txt) exact $(grep -c 'acc exact' /tmp/gpu-$l.txt), configs: $(grep 'carry a residual' /tmp/gpu-$l.txt | awk '{print $2 $3}' | uniq -c | tr '\n' ' ')"
  grep -E ":F:|:E:|mismatch" /tmp/gpu-$l.txt | head -5
done | tee -a $O/gpu.txt
cat /tmp/gpu-*.txt > $O/gpu-all.txt
echo "done at $(( $(date +%s) - T0 )) s"
