#!/bin/bash
# Session 28 call 4 (branch wip-producer-warp): the table with producer=wg past 512 tokens.
# 1. bench: the table (4 W4A8/W8A8 schemes), default shapes, M = 128..4096, with peers;
# 2. ncu: the 256x128 producer=wg kernel and the 128x128 one at 28672x4096 M = 4096;
# 3. GPU suite: llama and misc cases.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD
O=/tmp/o; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s28c4.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu >/dev/null || { echo BUILD FAILED; exit 1; }
Q=$root/build-dev/qjit
date
QJIT_CACHE_DIR=/tmp/qb timeout 330 $Q bench --scheme w4a8-lqq,w4a8-qoq,w4a8-is,w8a8 --m 128,256,512,1024,4096 --reps 20 --csv $O/table.csv --json $O/table.json > $O/table.txt 2>&1
echo "bench rc=$?"
date
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: $NCU"
# The table's kernel at M = 4096 is the 256x128 producer=wg one; the forced row the 128x128 tile.
QJIT_CACHE_DIR=/tmp/qb timeout 200 $NCU --kernel-name regex:qjit_gemm_tma --launch-count 6 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats \
    --section Occupancy --section LaunchStats \
    $Q bench --shapes 28672x4096 --m 4096 --reps 3 --no-peers --variant "pipe=tma;tile=128x128x128;warps=1x8;stages=4" > $O/ncu.txt 2>&1
echo "ncu rc=$?"
date
for c in llama misc; do
  ( cd build-dev && QJIT_CACHE_DIR=/tmp/qt CK_RUN_CASE=$c CK_DEFAULT_TIMEOUT=600 timeout 170 ./test_gpu ) > $O/gpu-$c.txt 2>&1
  echo "$c: $(tail -1 $O/gpu-$c.txt)"
done
date
tar -C $O -czf $OUT/c4.tgz .
