#!/bin/bash
# Session 48 call 3 (issue 14): the ring of residual blocks brings a kept residual block's part of a tile in one
# bulk copy (4 x 512 bytes for 64x64 blocks) instead of one per 16 x 64 block. Call 1's trees: at rho 0.1 X - Xr
# (the ring's copies) is 11-13 points of the persistent 128x256 kernels' +23..26 %.
# Prediction: if the copies' count is the cost, S over D down by up to 3/4 of X - Xr at rho 0.1 (+25 -> ~+16 %), new/old
# ~0.93 on the persistent points at rho 0.1, ~0.97 at 0.05; other points 1.00 (same kernels). Exact first.
T0=$(date +%s)
O=/tmp/o3; rm -rf $O; mkdir -p $O
cp .devdeps/s48c3.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu qjit_stamps > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
(cd build-dev && QJIT_CACHE_DIR=/tmp/qt QJIT_TEST_PIPES="rpieces" CK_RUN_CASE=sparse CK_DEFAULT_TIMEOUT=110 timeout 110 ./test_gpu > $O/gpu-sp.txt 2>&1; echo "rc=$?" >> $O/gpu-sp.txt)
echo "== gpu-sp: $(tail -1 $O/gpu-sp.txt) exact $(grep -c 'acc exact' $O/gpu-sp.txt) at $(( $(date +%s) - T0 )) s"; grep -E ":F:|:E:|mismatch" $O/gpu-sp.txt | head -5
grep -q ":F:\|:E:" $O/gpu-sp.txt && { tar -C $O -czf $OUT/c3.tgz .; exit 1; }
Q=$PWD/build-dev/qjit
T=$PWD/.devdeps/tpl
for t in old new old2 new2; do
  tp=$T/M/templates; case $t in new*) tp=$PWD/templates;; esac
  QJIT_TEMPLATE_PATH=$tp QJIT_CACHE_DIR=/tmp/qC-${t%2} timeout 100 $Q bench --scheme w4a8-lqq --sparsity 0.05,0.1 --no-peers --shapes 4096x4096,12288x4096,4096x11008,8192x8192 --m 256,1024,4096 --reps 10 --csv $O/bench-$t.csv > $O/bench-$t.txt 2>&1
  echo "bench $t rc=$? at $(( $(date +%s) - T0 )) s"; grep -iE "mismatch|not exact|error" $O/bench-$t.txt | head -3
done
python3 bench/bench-ab.py $O
echo "done at $(( $(date +%s) - T0 )) s"
tar -C $O -czf $OUT/c3.tgz .
