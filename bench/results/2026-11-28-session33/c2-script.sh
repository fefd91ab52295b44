#!/bin/bash
# Session 33 call 2: where the persistent 128x256 kernel's time goes after the stmatrix epilogue: ncu with
# per-instruction stall sampling (source page, SASS) on w4a8-lqq's table kernel at M = 4096 (4096x4096, 12288x4096)
# and w8a8's, GEMM alone.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD; T0=$(date +%s)
O=/tmp/o2; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s33c2.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli > $O/build.txt 2>&1 || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
Q=$root/build-dev/qjit
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
$NCU --version | tail -1
export QJIT_CACHE_DIR=/tmp/qb
prof() { # name scheme shape M
  timeout 150 $NCU --clock-control none --set full --import-source no --warp-sampling-interval 2 --kernel-name regex:qjit_gemm_tma --launch-skip 8 --launch-count 1 -o $O/$1 -f $Q bench --scheme $2 --shapes $3 --m ${4:-4096} --reps 10 --no-peers > $O/$1-run.txt 2>&1
  echo "ncu $1 rc=$? at $(( $(date +%s) - T0 )) s"
  $NCU --import $O/$1.ncu-rep --page source --csv --print-source sass > $O/sass-$1.csv 2> $O/sass-$1.err || $NCU --import $O/$1.ncu-rep --page source --csv > $O/sass-$1.csv 2>> $O/sass-$1.err
  $NCU --import $O/$1.ncu-rep --page details > $O/ncu-$1.txt 2>&1
  head -c 600 $O/sass-$1.csv; echo; wc -c $O/sass-$1.csv; head -3 $O/sass-$1.err
  grep -E "Duration|Registers Per|Warp Cycles Per Issued|Issue Slots Busy" $O/ncu-$1.txt | head -5
  gzip -f $O/sass-$1.csv
  rm -f $O/$1.ncu-rep
}
prof l4096 w4a8-lqq 4096x4096
prof l12288 w4a8-lqq 12288x4096
prof w4096 w8a8 4096x4096
prof l1024 w4a8-lqq 12288x4096 1024
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c2.tgz .
