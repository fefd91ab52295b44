#!/bin/bash
# Session 46 call 3 (issue 14): the residual warp's lanes copy the tile's residual blocks with cp.async (LDGSTS, 16
# bytes a lane per 512-byte block) and arrive through cp.async.mbarrier.arrive, instead of one bulk copy
# (cp.async.bulk, the TMA unit) per kept block. Session 44: copies from one L2-hot block cost nearly what real
# copies do (X - Xc 2.5-7.6 points at rho 0.01, the bulk op 0.9-3.7 of it). Prediction: if the bulk op in the TMA
# unit beside the tensor copies is the cost, new/old 0.97-0.99 at rho 0.01 and 0.95-0.98 at 0.1 (stamps, random
# blocks), qjit bench 0.97-0.99; if the cost is the copies' lateness (lookup + DRAM), no change.
# old = main's templates + call 2's own branch for the residual warp (.devdeps/tpl/N), new = the working tree.
T0=$(date +%s)
O=/tmp/o3; rm -rf $O; mkdir -p $O
cp .devdeps/s46c3.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli qjit_stamps test_gpu > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
timeout 150 python3 bench/stamps/ab.py build-dev/qjit_stamps $PWD/.devdeps/tpl/N/templates $PWD/templates 12288x4096x128 4096x4096x64 4096x4096x256 8192x8192x128 4096x4096x16 4096x11008x64 2>&1 | tee $O/ab.txt
echo "ab at $(( $(date +%s) - T0 )) s"
Q=$PWD/build-dev/qjit
for t in new old new2 old2; do
  TP=$PWD/templates; case $t in old*) TP=$PWD/.devdeps/tpl/N/templates;; esac
  QJIT_TEMPLATE_PATH=$TP QJIT_CACHE_DIR=/tmp/qC-${t%2} timeout 110 $Q bench --scheme w4a8-lqq --sparsity 0.05,0.1 --no-peers --shapes 4096x4096,12288x4096,4096x11008,8192x8192 --m 16,32,64,128,256,1024 --reps 10 --csv $O/bench-$t.csv > $O/bench-$t.txt 2>&1
  echo "bench $t rc=$? at $(( $(date +%s) - T0 )) s"
done
python3 .devdeps/bench-ab.py $O
P="pipe=tma;reduce=cluster,tile=16x64x128;warps=1x4;stages=8;split=2;pipe=tma;reduce=cluster;producer=wg,tile=128x128x128;warps=1x8;stages=6;split=2;pipe=tma;reduce=cluster;producer=wg,tile=64x128x128;warps=2x4;stages=5;split=2;pipe=tma"
(cd build-dev && QJIT_CACHE_DIR=/tmp/qt QJIT_TEST_PIPES="$P" CK_RUN_CASE=sparse CK_DEFAULT_TIMEOUT=60 timeout 110 ./test_gpu > $O/gpu-sp.txt 2>&1; echo "rc=$?" >> $O/gpu-sp.txt)
echo "== gpu-sp: $(grep -E '^[0-9]+%: Checks' $O/gpu-sp.txt) $(tail -1 $O/gpu-sp.txt) exact $(grep -c 'acc exact' $O/gpu-sp.txt) at $(( $(date +%s) - T0 )) s"; grep -E ":F:|:E:|differ|mismatch" $O/gpu-sp.txt | head -5
echo "done at $(( $(date +%s) - T0 )) s"
tar -C $O -czf $OUT/c3.tgz .
