#!/bin/bash
# Session 33 call 4: what the tuner finds beside the table where w8a8 loses to cuBLAS INT8 at M = 128 / 256
# (4096x4096, 22016x4096, 8192x28672, 4096x11008) and where w4a8-lqq loses at M = 256 / 512 (4096-wide layers,
# 12288x4096, 22016x4096): qjit tune --dry-run (every candidate checked bit-exact first).
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
T0=$(date +%s)
O=/tmp/o4; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s33c4.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli > $O/build.txt 2>&1 || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
Q=/tmp/src/build-dev/qjit
QJIT_CACHE_DIR=/tmp/qt timeout 260 $Q tune --scheme w8a8 --shapes 4096x4096,22016x4096,8192x28672,4096x11008 --m 128,256 --reps 10 --dry-run > $O/tune-w8a8.txt 2>&1
echo "tune w8a8 rc=$? at $(( $(date +%s) - T0 )) s"
QJIT_CACHE_DIR=/tmp/qt timeout 260 $Q tune --scheme w4a8-lqq --shapes 4096x4096,4096x11008,12288x4096,22016x4096 --m 256,512 --reps 10 --dry-run > $O/tune-lqq.txt 2>&1
echo "tune lqq rc=$? at $(( $(date +%s) - T0 )) s"
tail -40 $O/tune-w8a8.txt; tail -40 $O/tune-lqq.txt
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c4.tgz .
