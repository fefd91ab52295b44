#!/bin/bash
# Session 31 call 6 (same tree as call 5, on the warm machine): pingpong=1 against the dispatch table, default shapes,
# M = 256..4096, GEMM alone and forward: w4a8-lqq 128x128 s6, w8a8 128x128 s4.
orig=$PWD
if [ ! -x /tmp/src/build-dev/qjit ]; then
  rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src &&
  cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli >/dev/null 2>&1 || exit 1
  echo rebuilt
fi
cd /tmp/src || exit 1
root=$PWD; T0=$(date +%s)
O=/tmp/o6; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s31c6.sh $O/script.sh
Q=$root/build-dev/qjit
P6="pipe=tma;tile=128x128x128;warps=1x8;stages=6;producer=wg;persist=1;pingpong=1"
P4="pipe=tma;tile=128x128x128;warps=1x8;stages=4;producer=wg;persist=1;pingpong=1"
QJIT_CACHE_DIR=/tmp/qb timeout 150 $Q bench --no-peers --m 256,512,1024,4096 --reps 10 --variant "$P6" --csv $O/pp-lqq.csv > $O/pp-lqq.txt 2>&1
echo "bench lqq rc=$? at $(( $(date +%s) - T0 )) s"
sed -n '/^forced variants/,/^$/p' $O/pp-lqq.txt
QJIT_CACHE_DIR=/tmp/qb timeout 110 $Q bench --scheme w8a8 --no-peers --m 256,512,1024,4096 --reps 10 --variant "$P4" --csv $O/pp-w8a8.csv > $O/pp-w8a8.txt 2>&1
echo "bench w8a8 rc=$? at $(( $(date +%s) - T0 )) s"
sed -n '/^forced variants/,/^$/p' $O/pp-w8a8.txt
tar -C $O -czf $OUT/c6.tgz .
