#!/bin/bash
root=$PWD
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli >/dev/null || { echo BUILD FAILED; exit 1; }
Q=$root/build-dev/qjit
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export QJIT_CACHE_DIR=/tmp/qc
D=12288x4096,4096x4096,22016x4096,4096x11008,10240x8192,8192x8192,57344x8192,8192x28672
timeout 170 $Q tune --shapes $D --m 1,2,4,8,12,16,24,32,48,64,96,128,256 > $OUT/tune-h200.txt 2>&1
echo "tune rc=$?"; grep -E "tuned in" $OUT/tune-h200.txt
$Q tune --export $OUT/h200.records > /dev/null
timeout 140 $Q bench --shapes $D --m 1,4,16,32,64,128 --reps 20 --csv $OUT/bench-h200-tuned.csv --json $OUT/bench-h200-tuned.json > $OUT/bench-h200-tuned.txt 2>&1
echo bench rc=$?
grep -iE "speedup|geomean|faster" $OUT/bench-h200-tuned.txt | head -20
date
