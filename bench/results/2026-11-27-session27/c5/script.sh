#!/bin/bash
# session 27, call 5 (H200, HEAD 3c407c6): the eight default shapes tuned there with the cluster twins, then bench with peers at M <= 128
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD
O=/tmp/o; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s27c5.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli >/dev/null || { echo BUILD FAILED; exit 1; }
Q=$root/build-dev/qjit
date
export QJIT_CACHE_DIR=/tmp/qc
D=12288x4096,4096x4096,22016x4096,4096x11008,10240x8192,8192x8192,57344x8192,8192x28672
start=$(date +%s)
timeout 220 $Q tune --shapes $D --m 1,2,4,8,12,16,24,32,48,64,96,128,256 > $O/tune-h200.txt 2>&1
echo "tune rc=$? wall $(( $(date +%s) - start )) s" | tee -a $O/tune-h200.txt; grep -E "tuned in" $O/tune-h200.txt
$Q tune --export $O/h200.records > /dev/null
timeout 150 $Q bench --shapes $D --m 1,4,16,32,64,128 --reps 20 --csv $O/bench-h200-tuned.csv --json $O/bench-h200-tuned.json > $O/bench-h200-tuned.txt 2>&1
echo bench rc=$?
date
tar -C $O -czf $OUT/c5.tgz .
