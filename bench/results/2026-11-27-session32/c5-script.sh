#!/bin/bash
# Session 32 call 5 (warm machine, call 4's build): the full table with the cuBLAS peers on the sk dispatch table:
# w4a8-lqq, w4a8-qoq, w4a8-is, w8a8 on the eight default shapes at M = 128, 256, 512, 1024, 4096.
orig=$PWD; cd /tmp/src || exit 1
root=$PWD; T0=$(date +%s)
O=/tmp/o5; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s32c5.sh $O/script.sh
Q=$root/build-dev/qjit
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
QJIT_CACHE_DIR=/tmp/qb timeout 540 $Q bench --scheme w4a8-lqq,w4a8-qoq,w4a8-is,w8a8 --m 128,256,512,1024,4096 --reps 10 --csv $O/table.csv --json $O/table.json > $O/table.txt 2>&1
echo "bench rc=$?"
sed -n '/^summary/,$p' $O/table.txt | head -60
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c5.tgz .
