#!/bin/bash
# Session 28 call 5 (branch wip-producer-warp): w8a8 at M = 256/512 on the new buckets; ncu of the
# producer=wg kernel against the 128x128 tile; GPU suite: llama, pipes_a.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD
O=/tmp/o; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s28c5.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu >/dev/null || { echo BUILD FAILED; exit 1; }
Q=$root/build-dev/qjit
date
QJIT_CACHE_DIR=/tmp/qb timeout 100 $Q bench --scheme w8a8 --m 256,512 --reps 20 --no-peers --csv $O/w8.csv > $O/w8.txt 2>&1
echo "bench rc=$?"
date
QJIT_CACHE_DIR=/tmp/qb timeout 150 ncu --kernel-name regex:qjit_gemm_tma --launch-count 6 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats \
    --section Occupancy --section LaunchStats \
    $Q bench --shapes 28672x4096 --m 4096 --reps 5 --no-peers --variant "pipe=tma;tile=128x128x128;warps=1x8;stages=4" > $O/ncu.txt 2>&1
echo "ncu rc=$?"
date
( cd build-dev && QJIT_CACHE_DIR=/tmp/qt CK_RUN_CASE=pipes_a CK_DEFAULT_TIMEOUT=600 timeout 150 ./test_gpu ) > $O/gpu-pipes_a.txt 2>&1
echo "pipes_a: $(tail -1 $O/gpu-pipes_a.txt)"
( cd build-dev && QJIT_CACHE_DIR=/tmp/qt CK_RUN_CASE=llama CK_DEFAULT_TIMEOUT=600 timeout 280 ./test_gpu ) > $O/gpu-llama.txt 2>&1
echo "llama: $(tail -1 $O/gpu-llama.txt)"
date
tar -C $O -czf $OUT/c5.tgz .
