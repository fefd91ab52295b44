#!/bin/bash
# session 27, call 1: GPU case tuning + Python GPU tests (HEAD tree), then an exploration of
# split-K/cluster/wide TMA tiles at M = 64..512 on three unseen layers (forced variants, checked bit-exact by bench)
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD
O=/tmp/o; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s27c1.sh $O/script.sh 2>/dev/null
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu qjit >/dev/null || { echo BUILD FAILED; exit 1; }
Q=$root/build-dev/qjit
date
( cd build-dev && QJIT_CACHE_DIR=/tmp/qt CK_RUN_CASE=tuning CK_DEFAULT_TIMEOUT=300 timeout 200 ./test_gpu ) > $O/gpu-tuning.txt 2>&1
tail -3 $O/gpu-tuning.txt
rm -rf /tmp/site; python3 -m pip install -q --no-build-isolation --no-deps --no-cache-dir --target /tmp/site ./python > /tmp/pip.txt 2>&1 || cat /tmp/pip.txt
(cd /tmp && QJIT_TEST_INSTALLED=1 PYTHONPATH=/tmp/site timeout 300 python3 -m pytest -q -p no:cacheprovider $root/python/tests > $O/pytest.txt 2>&1; echo "rc=$?" >> $O/pytest.txt)
tail -3 $O/pytest.txt
date
V=()
for v in \
 "pipe=tma;tile=64x64x128;warps=1x4;stages=8;split=2;reduce=cluster" \
 "pipe=tma;tile=64x64x128;warps=1x4;stages=8;split=4;reduce=cluster" \
 "pipe=tma;tile=64x128x128;warps=1x8;stages=4;split=2;reduce=cluster" \
 "pipe=tma;tile=64x128x128;warps=1x4;stages=6;split=2;reduce=cluster" \
 "pipe=tma;tile=128x64x128;warps=1x4;stages=8;split=2;reduce=cluster" \
 "pipe=tma;tile=128x128x128;warps=1x8;stages=4;split=2;reduce=cluster" \
 "pipe=tma;tile=128x128x128;warps=1x8;stages=4;split=3" \
 "pipe=tma;tile=128x128x128;warps=1x8;stages=4;split=4;reduce=cluster" \
 "pipe=tma;tile=64x256x128;warps=1x8;stages=4;split=2;reduce=cluster" \
 "pipe=tma;tile=64x256x128;warps=1x8;stages=4;split=3" \
 "pipe=tma;tile=128x256x128;warps=1x8;stages=4;split=2;reduce=cluster" \
 "pipe=tma;tile=128x256x128;warps=1x8;stages=4;split=2" \
 "pipe=tma;tile=256x128x128;warps=2x4;stages=4;split=2;reduce=cluster" \
 "pipe=tma;tile=128x128x128;warps=2x4;stages=6;split=2;reduce=cluster" \
 ; do V+=(--variant "$v"); done
export QJIT_CACHE_DIR=/tmp/qx
timeout 400 $Q bench --shapes 4096x4096,28672x4096,3584x18944 --no-peers --m 64,128,256,512 --reps 20 "${V[@]}" --csv $O/explore.csv --json /tmp/j > $O/explore.txt 2>&1
echo "explore rc=$?"
date
tar -C $O -czf $OUT/c1.tgz .
