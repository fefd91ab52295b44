#!/bin/bash
# Session 45 call 8 (issue 14), branch kslice-even: sparse kernels split K evenly (the layer's table of slices by
# work retired). Exactness on every pipe kind that splits K (multistage, fused, wgmma, TMA with and without
# clusters and a producer warpgroup, splits 2-5, the residual's own ring), then the sparse Llama layers through
# the table. Predicted: exact everywhere (the kernels took any slice bounds; even ones are the dense kernels').
T0=$(date +%s)
O=/tmp/o8; rm -rf $O; mkdir -p $O
cp .devdeps/s45c8.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
P="split=3,split=5,split=4,stages=8;split=2;pipe=wgmma;reduce=cluster,tile=16x64x128;warps=1x4;stages=3;split=2;actq=fused"
P="$P,tile=64x64x128;warps=1x4;stages=8;split=2;pipe=tma;reduce=cluster;producer=wg,tile=16x64x128;warps=1x4;stages=6;split=2"
(cd build-dev && QJIT_CACHE_DIR=/tmp/qt QJIT_TEST_PIPES="$P" CK_RUN_CASE=sparse CK_DEFAULT_TIMEOUT=60 timeout 230 ./test_gpu > $O/gpu-sp.txt 2>&1; echo "rc=$?" >> $O/gpu-sp.txt)
echo "== gpu-sp: $(grep -E '^[0-9]+%: Checks' $O/gpu-sp.txt) $(tail -1 $O/gpu-sp.txt) exact $(grep -c 'acc exact' $O/gpu-sp.txt) at $(( $(date +%s) - T0 )) s"; grep -E ":F:|:E:" $O/gpu-sp.txt | head -5
(cd build-dev && QJIT_CACHE_DIR=/tmp/qt CK_RUN_CASE=sparse_llama CK_DEFAULT_TIMEOUT=140 timeout 150 ./test_gpu > $O/gpu-spl.txt 2>&1; echo "rc=$?" >> $O/gpu-spl.txt)
echo "== gpu-spl: $(grep -E '^[0-9]+%: Checks' $O/gpu-spl.txt) $(tail -1 $O/gpu-spl.txt) exact $(grep -c 'acc exact' $O/gpu-spl.txt) at $(( $(date +%s) - T0 )) s"; grep -E ":F:|:E:" $O/gpu-spl.txt | head -5
tar -C $O -czf $OUT/c8.tgz .
