#!/bin/bash
# Session 35 call 3: (1) what the tuner finds beside the table (after wu8's start values) where lqq still loses to
# cuBLAS at M = 256..1024 (4096-deep layers) and where w8a8 loses to cuBLAS INT8 at M = 64 / 128 (qjit tune
# --dry-run, every candidate bit-exact first); (2) ncu of the table kernel and cuBLAS FP8's at 22016x4096 M=256 and
# 12288x4096 M=512 (DRAM, L2, tensor pipe).
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD; T0=$(date +%s)
O=/tmp/o3; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s35c3.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli > $O/build.txt 2>&1 || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
Q=$root/build-dev/qjit
QJIT_CACHE_DIR=/tmp/qt timeout 150 $Q tune --scheme w4a8-lqq --shapes 4096x4096,12288x4096,22016x4096 --m 256,512,1024 --reps 10 --dry-run > $O/tune-lqq.txt 2>&1
echo "tune lqq rc=$? at $(( $(date +%s) - T0 )) s"
QJIT_CACHE_DIR=/tmp/qt timeout 120 $Q tune --scheme w8a8 --shapes 4096x4096,12288x4096,22016x4096,4096x11008 --m 64,128 --reps 10 --dry-run > $O/tune-w8a8.txt 2>&1
echo "tune w8a8 rc=$? at $(( $(date +%s) - T0 )) s"
grep -vE "^\s*$" $O/tune-lqq.txt | grep -E "x[0-9]+:|^ +[0-9]+ |bucket|geomean" | cut -c1-260
grep -vE "^\s*$" $O/tune-w8a8.txt | grep -E "x[0-9]+:|^ +[0-9]+ |bucket|geomean" | cut -c1-260
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
export QJIT_CACHE_DIR=/tmp/qb
prof() { # name regex skip shape M peers
  timeout 60 $NCU --set full --import-source no --kernel-name regex:$2 --launch-skip $3 --launch-count 1 -o $O/$1 -f $Q bench --scheme w4a8-lqq --shapes $4 --m $5 --reps 5 $6 > $O/$1-run.txt 2>&1
  echo "ncu $1 rc=$? at $(( $(date +%s) - T0 )) s"
  $NCU --import $O/$1.ncu-rep --page details > $O/ncu-$1.txt 2>&1
  rm -f $O/$1.ncu-rep
  echo "== $1"; grep -E "^  [a-z_0-9]+ .*\(|Duration|DRAM Throughput|Memory Throughput|L2 Hit Rate|L1/TEX Hit|Compute \(SM\) Throughput|Cluster Size|Grid Size|Block Size|Registers Per|Achieved Occ|Warp Cycles Per Issued" $O/ncu-$1.txt | head -18
}
for pt in "22016x4096 256" "12288x4096 512"; do
  set -- $pt; s=${1%%x*}-$2
  prof q$s qjit_gemm_tma 8 $1 $2 --no-peers
  prof c$s e4m3 2 $1 $2 ""
done
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c3.tgz .
