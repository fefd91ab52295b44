#!/bin/bash
root=$PWD
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu >/dev/null || { echo BUILD FAILED; exit 1; }
Q=$root/build-dev/qjit
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date
( cd build-dev && QJIT_CACHE_DIR=/tmp/qt CK_RUN_CASE=tuning CK_DEFAULT_TIMEOUT=300 timeout 200 ./test_gpu ) > $OUT/gpu-tuning.txt 2>&1
tail -5 $OUT/gpu-tuning.txt
S7=12288x4096,4096x4096,22016x4096,4096x11008
MS=1,2,4,8,16,32,64,128,256,512,1024,4096
export QJIT_CACHE_DIR=/tmp/qc
start=$(date +%s.%N)
timeout 330 $Q tune --shapes $S7 > $OUT/tune-l2-7b.txt 2>&1
echo "tune rc=$? wall $(echo "$(date +%s.%N) - $start" | bc) s" | tee -a $OUT/tune-l2-7b.txt
grep -E "geomean|layer|tuned in" $OUT/tune-l2-7b.txt
$Q tune --export $OUT/l2-7b.records > /dev/null
timeout 120 $Q bench --shapes $S7 --no-peers --m $MS --reps 30 --csv $OUT/bench-l2-tuned.csv --json /tmp/j1 > $OUT/bench-l2-tuned.txt 2>&1
echo bench tuned rc=$?
QJIT_CACHE_DIR=/tmp/qs timeout 150 $Q bench --shapes $S7 --no-peers --m $MS --reps 30 --csv $OUT/bench-l2-static.csv --json /tmp/j2 > $OUT/bench-l2-static.txt 2>&1
echo bench static rc=$?
date
