#!/bin/bash
# session 27, call 4 (HEAD 3c407c6): host cost split (launches alone vs dispatch) with the L3-8B records (call 3) and without;
# then the Llama-2-13B set tuned and benched (a third unseen set)
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD
O=/tmp/o; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s27c4.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli >/dev/null || { echo BUILD FAILED; exit 1; }
Q=$root/build-dev/qjit
date
QJIT_CACHE_DIR=/tmp/qr $Q tune --import $orig/.devdeps/l3-8b.records
for shape in 4096x4096 6144x4096 28672x4096 4096x14336; do
  for mode in tuned static; do
    dir=/tmp/qr; [ $mode = static ] && dir=/tmp/qs
    QJIT_CACHE_DIR=$dir timeout 100 $Q bench --shapes $shape --no-peers --m 1,128 --reps 20 --json $O/host-$shape-$mode.json > $O/host-$shape-$mode.txt 2>&1
    echo "$shape $mode rc=$?"; grep "host cost" $O/host-$shape-$mode.txt
  done
done
date
MS=1,2,4,8,16,32,64,128,256,512,1024,4096
name=l2-13b; shapes=15360x5120,5120x5120,27648x5120,5120x13824
export QJIT_CACHE_DIR=/tmp/qc-$name
start=$(date +%s)
timeout 240 $Q tune --shapes $shapes > $O/tune-$name.txt 2>&1
echo "tune $name rc=$? wall $(( $(date +%s) - start )) s" | tee -a $O/tune-$name.txt
$Q tune --export $O/$name.records > /dev/null
timeout 100 $Q bench --shapes $shapes --no-peers --m $MS --reps 20 --csv $O/bench-$name-tuned.csv --json /tmp/j1 > /dev/null 2>&1
echo bench tuned rc=$?
QJIT_CACHE_DIR=/tmp/qs-$name timeout 120 $Q bench --shapes $shapes --no-peers --m $MS --reps 20 --csv $O/bench-$name-static.csv --json /tmp/j2 > /dev/null 2>&1
echo bench static rc=$?
python3 bench/tune-compare.py $O/bench-$name-static.csv $O/bench-$name-tuned.csv > $O/compare-$name.txt; tail -1 $O/compare-$name.txt
date
tar -C $O -czf $OUT/c4.tgz .
