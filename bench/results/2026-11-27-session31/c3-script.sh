#!/bin/bash
# Session 31 call 3: ncu breakdown at M = 4096 on 12288x4096 (w4a8-lqq's table kernel: persistent 128x256 imfp; the
# excp 256x128 kernel; w8a8's table kernel; cuBLAS's INT8 and FP8 kernels) and at M = 256 on 4096x4096 (lqq's table
# kernel, the worst point of the table against cuBLAS).
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD; T0=$(date +%s)
O=/tmp/o; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s31c3.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli > $O/build.txt 2>&1 || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
Q=$root/build-dev/qjit
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
MET=sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_tensor_op_gmma.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed,smsp__average_warps_issue_stalled_gmma_per_issue_active.ratio,sm__sass_data_bytes_mem_shared_op_gmma.sum
export QJIT_CACHE_DIR=/tmp/qb
V3="pipe=tma;tile=256x128x128;warps=2x4;stages=3;producer=wg;persist=1;excp=1"
# launches of every kernel (name, grid x block) in each run, to pick the one to profile
prof() { # name skip regex args...
  local name=$1 skip=$2 re=$3; shift 3
  timeout 150 $NCU --clock-control none --set full --metrics $MET --kernel-name "$re" --launch-skip $skip --launch-count 1 -o $O/$name -f "$@" > $O/$name-run.txt 2>&1
  echo "ncu $name rc=$? at $(( $(date +%s) - T0 )) s"
  $NCU --import $O/$name.ncu-rep --page details > $O/ncu-$name.txt 2>&1
  $NCU --import $O/$name.ncu-rep --page raw > $O/raw-$name.txt 2>&1
  rm -f $O/$name.ncu-rep
}
timeout 120 $NCU --clock-control none --metrics gpu__time_duration.sum $Q bench --shapes 12288x4096 --m 4096 --reps 5 --no-peers --variant "$V3" > $O/list-excp.txt 2>&1
i=$(grep -E "^  qjit_gemm_tma" $O/list-excp.txt | grep -n "(512, 1, 1)" | head -1 | cut -d: -f1); echo "excp launch index $i"
prof imfp 0 regex:qjit_gemm_tma $Q bench --shapes 12288x4096 --m 4096 --reps 5 --no-peers
[ -n "$i" ] && prof excp $((i-1)) regex:qjit_gemm_tma $Q bench --shapes 12288x4096 --m 4096 --reps 5 --no-peers --variant "$V3"
prof w8a8 0 regex:qjit_gemm_tma $Q bench --scheme w8a8 --shapes 12288x4096 --m 4096 --reps 5 --no-peers
prof m256 0 regex:qjit_gemm_tma $Q bench --shapes 4096x4096 --m 256 --reps 5 --no-peers
timeout 120 $NCU --clock-control none --metrics gpu__time_duration.sum $Q bench --scheme w8a8 --shapes 12288x4096 --m 4096 --reps 5 > $O/list-cublas.txt 2>&1
grep -E "^  [A-Za-z_].*Context" $O/list-cublas.txt | sed 's/ (.*//' | awk '!seen[$1]++ {print $1}' > $O/kernel-names.txt
cat $O/kernel-names.txt
n=0
for k in $(grep -v -E "^(qjit|wgmma_peak)" $O/kernel-names.txt | head -4); do
  c=$(grep -E "^  $k \(" $O/list-cublas.txt | wc -l)   # its last launch: the shape's timing, not the peak's 8192^3
  n=$((n+1)); prof cublas$n $((c-1)) "$k" $Q bench --scheme w8a8 --shapes 12288x4096 --m 4096 --reps 5
done
for f in $O/ncu-*.txt; do echo "== $f"; grep -E "^  [A-Za-z_].*\(|Duration|Compute \(SM\) Throughput|DRAM Throughput|L2 Cache Throughput|Issue Slots Busy|Registers Per|Achieved Active Warps" $f | head -12; grep -E "sm__pipe_tensor_cycles_active.avg.pct|l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct|stalled_gmma_per_issue" ${f/ncu-/raw-} | head -4; done
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c3.tgz .
