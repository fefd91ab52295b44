#!/usr/bin/env bash
# Session 22, call 5: ncu of the in-place two-part activation kernel against the one-part one (act_time's
# launches: K = 4096, M = 1 is launch 3, M = 1024 launch 132), to see why the former is 1 us slower at
# M = 1 and 30 % at M = 1024 (call 4).
set -u
out=$OUT; T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi -L > $out/device.txt 2>&1; cat $out/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && timeout 240 cmake --build build-dev -j16 --target qjit_cli qjit_static) > $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
gcc -O2 -I base -I codegen -I include -I runtime -I cache -I /usr/local/cuda/include .devdeps/tools/act_time.c build-dev/libqjit.a -L/usr/local/cuda/lib64 -lnvrtc -llua5.4 -lm -lpthread -ldl -o act_time >> $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
stamp built
export QJIT_CACHE_DIR=/tmp/qc
A="kernel=act-quant;arch=sm_90a"
NCU=/usr/local/cuda/bin/ncu
i=0
for key in "$A;bits=4;threads=512" "$A;bits=8+4;scales=1;inplace=1;threads=512"; do
  ./act_time "$key" > /dev/null 2>&1   # compile into the cache first
  for skip in 3 132; do
    timeout 60 $NCU --clock-control none --kernel-name regex:act_quant --launch-skip $skip --launch-count 1 \
      --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section SchedulerStats \
      --section InstructionStats --section MemoryWorkloadAnalysis ./act_time "$key" > $out/ncu-$i-$skip.txt 2>&1
    echo "$key skip $skip rc=$?"
  done
  i=$((i + 1))
done
stamp ncu
for f in $out/ncu-*.txt; do echo "== $f"; grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Executed Instructions  |Issued Instructions  |Warp Cycles Per Issued|DRAM Throughput|Memory Throughput|Compute \(SM\)|No Eligible|Stall|Block Limit" $f | head -30; done
