#!/bin/bash
# session 27, call 3: with the cluster twins as candidates (HEAD cb04b6c): tune two unseen sets, bench static vs tuned; GPU case tuning
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD
O=/tmp/o; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s27c3.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu >/dev/null || { echo BUILD FAILED; exit 1; }
Q=$root/build-dev/qjit
date
MS=1,2,4,8,16,32,64,128,256,512,1024,4096
run_set() {
  name=$1; shapes=$2
  export QJIT_CACHE_DIR=/tmp/qc-$name
  start=$(date +%s.%N)
  timeout 240 $Q tune --shapes $shapes > $O/tune-$name.txt 2>&1
  echo "tune $name rc=$? wall $(echo "$(date +%s.%N) - $start" | bc) s" | tee -a $O/tune-$name.txt
  $Q tune --export $O/$name.records > /dev/null
  timeout 100 $Q bench --shapes $shapes --no-peers --m $MS --reps 20 --csv $O/bench-$name-tuned.csv --json /tmp/j1 > /dev/null 2>&1
  echo bench tuned rc=$?
  QJIT_CACHE_DIR=/tmp/qs-$name timeout 100 $Q bench --shapes $shapes --no-peers --m $MS --reps 20 --csv $O/bench-$name-static.csv --json /tmp/j2 > /dev/null 2>&1
  echo bench static rc=$?
  python3 bench/tune-compare.py $O/bench-$name-static.csv $O/bench-$name-tuned.csv > $O/compare-$name.txt; tail -1 $O/compare-$name.txt
}
run_set l3-8b 6144x4096,4096x4096,28672x4096,4096x14336
run_set qwen-7b 4608x3584,3584x3584,37888x3584,3584x18944
date
( cd build-dev && QJIT_CACHE_DIR=/tmp/qt CK_RUN_CASE=tuning CK_DEFAULT_TIMEOUT=300 timeout 100 ./test_gpu ) > $O/gpu-tuning.txt 2>&1
tail -3 $O/gpu-tuning.txt
tar -C $O -czf $OUT/c3.tgz .
