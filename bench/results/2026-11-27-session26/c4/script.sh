#!/bin/bash
root=$PWD
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli >/dev/null || { echo BUILD FAILED; exit 1; }
Q=$root/build-dev/qjit
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
O=/tmp/o; mkdir -p $O
( cd build-dev && cmake --build . -j16 --target test_gpu >/dev/null && QJIT_CACHE_DIR=/tmp/qt CK_RUN_CASE=tuning CK_DEFAULT_TIMEOUT=300 timeout 150 ./test_gpu ) > $O/gpu-tuning.txt 2>&1; tail -3 $O/gpu-tuning.txt
MS=1,2,4,8,16,32,64,128,256,512,1024,4096
run_set() {
  name=$1; shapes=$2
  export QJIT_CACHE_DIR=/tmp/qc-$name
  timeout 240 $Q tune --shapes $shapes > $O/tune-$name.txt 2>&1
  echo "tune $name rc=$?"; grep -E "tuned in" $O/tune-$name.txt
  $Q tune --export $O/$name.records > /dev/null
  timeout 100 $Q bench --shapes $shapes --no-peers --m $MS --reps 20 --csv $O/bench-$name-tuned.csv --json /tmp/j1 > /dev/null 2>&1
  echo bench tuned rc=$?
  QJIT_CACHE_DIR=/tmp/qs-$name timeout 100 $Q bench --shapes $shapes --no-peers --m $MS --reps 20 --csv $O/bench-$name-static.csv --json /tmp/j2 > /dev/null 2>&1
  echo bench static rc=$?
}

run_set l3-8b 6144x4096,4096x4096,28672x4096,4096x14336
run_set qwen-7b 4608x3584,3584x3584,37888x3584,3584x18944

date
tar -C /tmp/o -czf $OUT/c4.tgz . ; ls -la /tmp/o | head -30
