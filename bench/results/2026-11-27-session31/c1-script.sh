#!/bin/bash
# Session 31 call 1 (HEAD de18bfa): ncu breakdown of the persistent 128x256 kernel (w4a8-lqq) and of the w8a8 and
# cuBLAS kernels on 28672x4096 at M = 4096; then the full table of every W4A8/W8A8 scheme against cuBLAS.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD; T0=$(date +%s)
O=/tmp/o; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s31c1.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli > $O/build.txt 2>&1 || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
Q=$root/build-dev/qjit
echo "built $(( $(date +%s) - T0 )) s"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
$NCU --query-metrics 2>/dev/null | grep -i -E "gmma|tensor_op|pipe_tensor" > $O/ncu-metric-names.txt
for s in w4a8-lqq w8a8; do
  QJIT_CACHE_DIR=/tmp/qb timeout 120 $NCU --clock-control none --set full --kernel-name regex:qjit_gemm_tma --launch-count 1 \
    $Q bench --scheme $s --shapes 28672x4096 --m 4096 --reps 1 --no-peers > $O/ncu-$s.txt 2>&1
  echo "ncu $s rc=$? $(( $(date +%s) - T0 )) s"
done
QJIT_CACHE_DIR=/tmp/qb timeout 150 $NCU --clock-control none --set full --kernel-name "regex:^(sm90|cutlass|nvjet|void cutlass)" --launch-count 3 \
    $Q bench --scheme w8a8 --shapes 28672x4096 --m 4096 --reps 1 > $O/ncu-cublas.txt 2>&1
echo "ncu cublas rc=$? $(( $(date +%s) - T0 )) s"
for f in $O/ncu-*.txt; do echo "== $f"; grep -E "^  [A-Za-z_].*\(|Duration|Compute \(SM\) Throughput|DRAM Throughput|L2 Cache Throughput|Issue Slots Busy|Registers Per|Achieved Active Warps|Warp Cycles Per Issued" $f | head -30; done
QJIT_CACHE_DIR=/tmp/qb timeout $(( 585 - ($(date +%s) - T0) )) $Q bench --scheme w4a8-lqq,w4a8-qoq,w4a8-is,w8a8 --m 128,256,512,1024,4096 --reps 20 --csv $O/table.csv --json $O/table.json > $O/table.txt 2>&1
echo "bench rc=$?"
grep -E "^summary|geomean|peak|POPS|TOPS" $O/table.txt | head -40
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c1.tgz .
