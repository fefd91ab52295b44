#!/bin/bash
# Session 35 call 1: where the time goes at the mid-M points that still lose to cuBLAS (GEMM alone): ncu on
# w4a8-lqq's table kernel and on cuBLAS FP8's at 22016x4096 M=256, 12288x4096 M=512, 4096x4096 M=256, 10240x8192
# M=512 (DRAM and L2 throughput, tensor pipe, stalls); and the ring's depth at those points (variant rows: the
# persistent 128x256 kernel at 3 and 4 stages, 128x128 at 6 and 8).
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD; T0=$(date +%s)
O=/tmp/o1; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s35c1.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli > $O/build.txt 2>&1 || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
Q=$root/build-dev/qjit
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
export QJIT_CACHE_DIR=/tmp/qb
# warm the cache
$Q compile --defaults --arch sm_90a > /dev/null 2>&1
echo "compiled $(( $(date +%s) - T0 )) s"
prof() { # name regex skip shape M peers
  timeout 100 $NCU --set full --import-source no --kernel-name regex:$2 --launch-skip $3 --launch-count 1 -o $O/$1 -f $Q bench --scheme w4a8-lqq --shapes $4 --m $5 --reps 3 $6 > $O/$1-run.txt 2>&1
  echo "ncu $1 rc=$? at $(( $(date +%s) - T0 )) s"
  $NCU --import $O/$1.ncu-rep --page details > $O/ncu-$1.txt 2>&1
  $NCU --import $O/$1.ncu-rep --page raw --csv > $O/raw-$1.csv 2>&1; gzip -f $O/raw-$1.csv
  rm -f $O/$1.ncu-rep
  echo "== $1"; grep -E "^  [a-z_0-9]+ .*\(|Duration|DRAM Throughput|Memory Throughput|L2 Hit Rate|L1/TEX Hit|Compute \(SM\) Throughput|Cluster Size|Grid Size|Block Size|Registers Per|Shared Memory Config|Theoretical Occ|Achieved Occ|One or More Eligible|Warp Cycles Per Issued" $O/ncu-$1.txt | head -24
}
for pt in "22016x4096 256" "12288x4096 512" "4096x4096 256" "10240x8192 512"; do
  set -- $pt; s=${1%%x*}-$2
  prof q$s qjit_gemm_tma 8 $1 $2 --no-peers
  prof c$s e4m3 2 $1 $2 ""
done
echo "ncu done at $(( $(date +%s) - T0 )) s"
V="pipe=tma;tile=128x256x128;warps=1x8;producer=wg;persist=1;sk=1;wu8=1"
W="pipe=tma;tile=128x128x128;warps=1x8;producer=wg;wu8=1"
timeout 200 $Q bench --scheme w4a8-lqq --shapes 22016x4096,12288x4096,4096x4096,10240x8192 --m 256,512 --reps 20 --no-peers \
  --variant "$V;stages=3" --variant "$V;stages=4" --variant "pipe=tma;tile=128x256x128;warps=1x8;producer=wg;persist=1;sk=1;stages=4" --variant "$W;stages=6" --variant "$W;stages=8" \
  --variant "$W;stages=6;persist=1;sk=1" --csv $O/v.csv > $O/v.txt 2>&1
echo "variants rc=$?"
python3 - $O/v.csv <<'PY'
import csv,sys
for r in csv.DictReader(open(sys.argv[1])):
    v=';'.join(x for x in r['variant'].split(';') if x.split('=')[0] in ('tile','stages','persist','wu8','split'))
    print(r['N'],r['K'],r['M'],r['forced'],r['tokens_us'],v)
PY
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c1.tgz .
