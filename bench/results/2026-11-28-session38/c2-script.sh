#!/bin/bash
# Session 38 call 2 (H200, main 5cd53e6): where the small-M 4096-wide kernels' time goes. An instrumented template
# copy (tpl/S, timing study: thread 0 of each CTA stamps clock64 at fixed points, the last CTA of launches 10..13
# prints them with each CTA's globaltimer start/end) on the split-K TMA kernels at 4096x4096 M = 64 / 128 and the
# producer kernel at 12288x4096 M = 128; the same variants uninstrumented for the overhead; ncu durations of the
# cuBLAS FP8 kernels at 4096x4096 M = 64 / 128.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
T0=$(date +%s)
O=/tmp/o2; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s38c2.sh $O/script.sh; cp $orig/.devdeps/qsan.py $O/
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
Q=$PWD/build-dev/qjit; TS=$orig/.devdeps/tpl/S/templates
B="pipe=tma;scheme=w4a8-lqq;wu8=1"
V64a="$B;tile=64x64x128;warps=1x4;stages=8;split=2;reduce=cluster"
V64b="$B;tile=64x64x128;warps=1x4;stages=8;split=2;reduce=global"
V128a="$B;tile=64x128x128;warps=1x8;stages=4;split=2;reduce=cluster"
V128b="$B;tile=128x64x128;warps=1x4;stages=8;split=2;reduce=cluster"
V128c="$B;tile=128x128x128;warps=1x8;stages=8;split=1;producer=wg"
run() { # name shape M variants...
  local n=$1 s=$2 m=$3; shift 3; local a=(); for v in "$@"; do a+=(--variant "$v"); done
  QJIT_CACHE_DIR=/tmp/qS QJIT_TEMPLATE_PATH=$TS timeout 80 $Q bench --scheme w4a8-lqq --no-peers --shapes $s --m $m --reps 20 "${a[@]}" > $O/st-$n.txt 2>&1
  echo "st $n rc=$? at $(( $(date +%s) - T0 )) s"
  QJIT_CACHE_DIR=/tmp/qP timeout 80 $Q bench --scheme w4a8-lqq --no-peers --shapes $s --m $m --reps 20 "${a[@]}" > $O/plain-$n.txt 2>&1
  echo "plain $n rc=$? at $(( $(date +%s) - T0 )) s"
  grep -E "^w4a8" $O/st-$n.txt | cut -c1-80; grep -E "^w4a8" $O/plain-$n.txt | cut -c1-80
}
run m64 4096x4096 64 "$V64a" "$V64b"
run m128 4096x4096 128 "$V128a" "$V128b"
run w128 12288x4096 128 "$V128c"
python3 $O/qsan.py $O/st-m64.txt $O/st-m128.txt $O/st-w128.txt > $O/stamps.txt 2>&1; echo "qsan rc=$?"
cat $O/stamps.txt | head -150
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for m in 64 128; do
QJIT_CACHE_DIR=/tmp/qn timeout 90 $NCU --clock-control none --section SpeedOfLight --section LaunchStats --kernel-name regex:"e4m3|fp8|f8|nvjet|qqt" --launch-count 6 -o $O/cub$m -f $Q bench --scheme w4a8-lqq --shapes 4096x4096 --m $m --reps 5 > $O/cub$m-run.txt 2>&1
echo "ncu cub$m rc=$? at $(( $(date +%s) - T0 )) s"
$NCU --import $O/cub$m.ncu-rep --page details > $O/ncu-cub$m.txt 2>&1; rm -f $O/cub$m.ncu-rep
grep -E "^  [A-Za-z_].*\(|Duration|Elapsed Cycles|SM Active|DRAM Throughput|Grid Size|Cluster Size" $O/ncu-cub$m.txt | head -24
done
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c2.tgz .
