#!/bin/bash
# Session 33 call 6: the full table with the cuBLAS peers on 5577019 (stmatrix epilogues, early scale loads, the
# producer one-wave choice at M = 65..256): w4a8-lqq, w4a8-qoq, w4a8-is, w8a8 on the eight default shapes at
# M = 16, 64, 128, 256, 512, 1024, 4096.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD; T0=$(date +%s)
O=/tmp/o6; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s33c6.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli > $O/build.txt 2>&1 || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
Q=$root/build-dev/qjit
QJIT_CACHE_DIR=/tmp/qb timeout 520 $Q bench --scheme w4a8-lqq,w4a8-qoq,w4a8-is,w8a8 --m 16,64,128,256,512,1024,4096 --reps 10 --csv $O/table.csv --json $O/table.json > $O/table.txt 2>&1
echo "bench rc=$?"
sed -n '/^summary/,$p' $O/table.txt | head -70
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c6.tgz .
