#!/bin/bash
# session 27, call 2: GPU case tuning + Python GPU tests (HEAD tree), then an exploration of
# split-K/cluster/wide TMA tiles at M = 64..512 on three unseen layers (forced variants, checked bit-exact by bench)
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD
O=/tmp/o; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s27c2.sh $O/script.sh 2>/dev/null
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu qjit >/dev/null || { echo BUILD FAILED; exit 1; }
Q=$root/build-dev/qjit
date
( cd build-dev && QJIT_CACHE_DIR=/tmp/qt CK_RUN_CASE=tuning CK_DEFAULT_TIMEOUT=300 timeout 200 ./test_gpu ) > $O/gpu-tuning.txt 2>&1
tail -3 $O/gpu-tuning.txt
date
A=("pipe=tma;tile=64x64x128;warps=1x4;stages=8;split=2;reduce=cluster"
 "pipe=tma;tile=64x64x128;warps=1x4;stages=8;split=4;reduce=cluster"
 "pipe=tma;tile=64x128x128;warps=1x8;stages=4;split=2;reduce=cluster"
 "pipe=tma;tile=64x128x128;warps=1x4;stages=6;split=2;reduce=cluster"
 "pipe=tma;tile=128x64x128;warps=1x4;stages=8;split=2;reduce=cluster"
 "pipe=tma;tile=128x128x128;warps=1x8;stages=4;split=2;reduce=cluster"
 "pipe=tma;tile=128x128x128;warps=1x8;stages=4;split=3")
B=("pipe=tma;tile=128x128x128;warps=1x8;stages=4;split=4;reduce=cluster"
 "pipe=tma;tile=64x256x128;warps=1x8;stages=4;split=2;reduce=cluster"
 "pipe=tma;tile=64x256x128;warps=1x8;stages=4;split=3"
 "pipe=tma;tile=128x256x128;warps=1x8;stages=4;split=2;reduce=cluster"
 "pipe=tma;tile=128x256x128;warps=1x8;stages=4;split=2"
 "pipe=tma;tile=256x128x128;warps=2x4;stages=4;split=2;reduce=cluster"
 "pipe=tma;tile=128x128x128;warps=2x4;stages=6;split=2;reduce=cluster")
export QJIT_CACHE_DIR=/tmp/qx
for part in A B; do
  V=(); eval 'for v in "${'$part'[@]}"; do V+=(--variant "$v"); done'
  timeout 250 $Q bench --shapes 4096x4096,28672x4096,3584x18944 --no-peers --m 64,128,256,512 --reps 20 "${V[@]}" --csv $O/explore-$part.csv --json /tmp/j > $O/explore-$part.txt 2>&1
  echo "explore $part rc=$?"
done

date
tar -C $O -czf $OUT/c2.tgz .
