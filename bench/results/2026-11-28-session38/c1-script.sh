#!/bin/bash
# Session 38 call 1 (H200, main 5cd53e6): (1) ncu of the small-M 4096-wide kernels (qjit's table GEMM alone at
# 4096x4096 M = 64 / 128, 12288x4096 M = 128, and the cuBLAS peers' kernels at 4096x4096 M = 128): memory and
# L2 throughput, stall reasons; (2) qjit tune of the eight default shapes on the H200 (M to 256), then the bench
# with those records against the cuBLAS peers at M <= 128 (issue 18's H200 target).
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
T0=$(date +%s)
O=/tmp/o1; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s38c1.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
Q=$PWD/build-dev/qjit
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
SEC="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section LaunchStats --section Occupancy --section SchedulerStats --section ComputeWorkloadAnalysis"
prof() { # name shape M
  QJIT_CACHE_DIR=/tmp/qn timeout 80 $NCU --clock-control none $SEC --kernel-name regex:qjit_gemm --launch-skip 8 --launch-count 1 -o $O/$1 -f $Q bench --scheme w4a8-lqq --shapes $2 --m $3 --reps 5 --no-peers > $O/$1-run.txt 2>&1
  echo "ncu $1 rc=$? at $(( $(date +%s) - T0 )) s"
  $NCU --import $O/$1.ncu-rep --page details > $O/ncu-$1.txt 2>&1; rm -f $O/$1.ncu-rep
  grep -E "^  [a-z_]+.*\(|Duration|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Memory Throughput|Compute \(SM\) Throughput|Registers Per|Warp Cycles Per Issued|Issue Slots Busy|Achieved Occupancy|Grid Size|Block Size" $O/ncu-$1.txt | head -16
}
prof q64 4096x4096 64
prof q128 4096x4096 128
prof w128 12288x4096 128
QJIT_CACHE_DIR=/tmp/qn timeout 80 $NCU --clock-control none $SEC --kernel-name regex:"nvjet|xmma|cutlass|sm90|splitK|reduce|gemm_" --kernel-name-base demangled --launch-count 40 -o $O/cub -f $Q bench --scheme w4a8-lqq --shapes 4096x4096 --m 128 --reps 5 > $O/cub-run.txt 2>&1
echo "ncu cub rc=$? at $(( $(date +%s) - T0 )) s"
$NCU --import $O/cub.ncu-rep --page details > $O/ncu-cub.txt 2>&1; rm -f $O/cub.ncu-rep
grep -E "^  [A-Za-z_].*\(|Duration|DRAM Throughput|L2 Cache Throughput|Grid Size|Block Size" $O/ncu-cub.txt | head -60
echo "ncu done at $(( $(date +%s) - T0 )) s"
export QJIT_CACHE_DIR=/tmp/qc
D=12288x4096,4096x4096,22016x4096,4096x11008,10240x8192,8192x8192,57344x8192,8192x28672
s=$(date +%s)
timeout 230 $Q tune --shapes $D --m 1,2,4,8,12,16,24,32,48,64,96,128,192,256 > $O/tune-h200.txt 2>&1
echo "tune rc=$? wall $(( $(date +%s) - s )) s" | tee -a $O/tune-h200.txt; grep -E "tuned in|geomean" $O/tune-h200.txt | head
$Q tune --export $O/h200.records > /dev/null
left=$(( 590 - ($(date +%s) - T0) ))
timeout $left $Q bench --shapes $D --m 1,4,16,32,64,128 --reps 20 --csv $O/bench-h200-tuned.csv --json $O/bench-h200-tuned.json > $O/bench-h200-tuned.txt 2>&1
echo "bench rc=$? at $(( $(date +%s) - T0 )) s"
sed -n '/^summary/,$p' $O/bench-h200-tuned.txt | head -30
tar -C $O -czf $OUT/c1.tgz .
