#!/bin/bash
# Session 50 call 7: exactness of the dense table change at M = 17..32 past 8192 rows (the TMA 32x64 tile with a
# producer warpgroup, 6 stages, split 2 in a cluster): the tile forced on every scheme and group (pipes_a/b; and
# with every sparse config), and the Llama layers through the table per scheme (11008x4096 at M <= 32 takes it).
O=$OUT/c7; mkdir -p $O; cp .devdeps/s50c7.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target test_gpu > /tmp/build.txt 2>&1) || { echo BUILD FAILED; tail /tmp/build.txt; exit 1; }
T0=$(date +%s)
cd build-dev
run_lane() { QJIT_CACHE_DIR=/tmp/qt-$1 QJIT_TEST_SCHEMES=$2 QJIT_TEST_PIPES="$4" CK_RUN_CASE=$3 CK_DEFAULT_TIMEOUT=140 timeout 140 ./test_gpu > /tmp/gpu-$1.txt 2>&1; echo "rc=$?" >> /tmp/gpu-$1.txt; }
P="tile=32x64x128;warps=1x4;stages=6;split=2;pipe=tma;reduce=cluster;producer=wg"
run_lane pa "" pipes_a "$P" &
run_lane pb "" pipes_b "$P" &
run_lane sp "" sparse "$P" &
for s in w4a8-lqq w4a8-qoq w4a8-is w8a8 w4a4; do run_lane L$s $s llama "" & done
wait
cd ..
for l in pa pb sp Lw4a8-lqq Lw4a8-qoq Lw4a8-is Lw8a8 Lw4a4; do
  echo "== lane $l: $(tail -1 /tmp/gpu-$l.txt) exact $(grep -c 'acc exact' /tmp/gpu-$l.txt); $(grep -E '^[0-9]+%' /tmp/gpu-$l.txt)"
  grep -E ":F:|:E:|mismatch" /tmp/gpu-$l.txt | head -5
done | tee $O/gpu.txt
cat /tmp/gpu-*.txt > $O/gpu-all.txt
echo "done at $(( $(date +%s) - T0 )) s"
