#!/bin/bash
# Session 32 call 2 (warm machine, call 1's build): sk=1 against the table, default shapes, M = 256..4096,
# GEMM alone and forward: w4a8-lqq 128x256 s4 persistent sk; w8a8 256x128 s3 persistent sk.
orig=$PWD; cd /tmp/src || exit 1
root=$PWD; T0=$(date +%s)
O=/tmp/o2; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s32c2.sh $O/script.sh
Q=$root/build-dev/qjit
SK="pipe=tma;tile=128x256x128;warps=1x8;stages=4;producer=wg;persist=1;sk=1"
SK8="pipe=tma;tile=256x128x128;warps=2x4;stages=3;producer=wg;persist=1;sk=1"
QJIT_CACHE_DIR=/tmp/qb timeout 250 $Q bench --no-peers --m 256,512,1024,4096 --reps 10 --variant "$SK" --csv $O/sk-lqq.csv > $O/sk-lqq.txt 2>&1
echo "bench lqq rc=$? at $(( $(date +%s) - T0 )) s"
sed -n '/^forced variants/,/^$/p' $O/sk-lqq.txt
QJIT_CACHE_DIR=/tmp/qb timeout 200 $Q bench --scheme w8a8 --no-peers --m 256,512,1024,4096 --reps 10 --variant "$SK8" --csv $O/sk-w8a8.csv > $O/sk-w8a8.txt 2>&1
echo "bench w8a8 rc=$? at $(( $(date +%s) - T0 )) s"
sed -n '/^forced variants/,/^$/p' $O/sk-w8a8.txt
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c2.tgz .
