#!/bin/bash
# Session 45 call 1 (issue 14), run on a checkout of branch wip-sparse-onewarp (.devdeps/tpl/M = main's templates):
# a producer warpgroup's first warp brings the sparse room's residual beside the tensor copies (one arrival a phase;
# lookups before the slot's wait). Predicted: the second arrival's 0..5 points (session 43, Y - Z) and part of the
# copies' issue delay: new/old ~0.96..0.98 on the stamps points; exact.
T0=$(date +%s)
O=/tmp/o1; rm -rf $O; mkdir -p $O
cp .devdeps/s45c1.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli qjit_stamps test_gpu > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
P="tile=128x128x128;warps=1x8;stages=6;split=2;pipe=tma;reduce=cluster;producer=wg,tile=64x64x128;warps=1x4;stages=8;split=2;pipe=tma;reduce=cluster;producer=wg,tile=128x64x128;warps=1x4;stages=6;pipe=tma;producer=wg;persist=1"
P="$P,tile=64x128x128;warps=2x4;stages=8;split=2;pipe=tma;producer=wg,?tile=256x128x128;warps=2x4;stages=4;split=3;pipe=tma;producer=wg"
P="$P,tile=16x64x128;warps=1x4;stages=8;split=2;pipe=tma;reduce=cluster;producer=wg,tile=32x64x128;warps=1x4;stages=8;split=2;pipe=tma;reduce=cluster;producer=wg,?tile=128x256x128;warps=1x8;stages=4;split=2;pipe=tma;producer=wg"
(cd build-dev && QJIT_CACHE_DIR=/tmp/qt QJIT_TEST_PIPES="$P" CK_RUN_CASE=sparse CK_DEFAULT_TIMEOUT=60 timeout 190 ./test_gpu > $O/gpu-sp.txt 2>&1; echo "rc=$?" >> $O/gpu-sp.txt)
echo "== gpu-sp: $(grep -E '^[0-9]+%: Checks' $O/gpu-sp.txt) $(tail -1 $O/gpu-sp.txt) exact $(grep -c 'acc exact' $O/gpu-sp.txt) at $(( $(date +%s) - T0 )) s"; grep -E ":F:|:E:" $O/gpu-sp.txt | head -5
timeout 200 python3 bench/stamps/ab.py build-dev/qjit_stamps $PWD/.devdeps/tpl/M/templates $PWD/templates 12288x4096x128 4096x4096x64 12288x4096x64 8192x8192x128 4096x4096x256 4096x11008x128 4096x4096x1024 2>&1 | tee $O/ab.txt
echo "stamps at $(( $(date +%s) - T0 )) s"
tar -C $O -czf $OUT/c1.tgz .
