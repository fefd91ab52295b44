#!/bin/bash
# Session 48 call 4 (issue 14): (a) exactness of main as landed (29ebae6: the ring's parts in one bulk copy) on the
# sparse forced pipes with persist=1 and on the LLaMA layers (the table's twins, the persistent ring among them);
# (b) the persistent ring kernels' producer at 40 registers (its MMA warpgroups 232, not 224; the producer
# spills 12 bytes in its residual warp's loop): tpl/P against main. Prediction: 0.98-1.00 if the MMA warpgroups'
# 224 cost ptxas some scheduling; nothing elsewhere (same kernels).
T0=$(date +%s)
O=/tmp/o4; rm -rf $O; mkdir -p $O
cp .devdeps/s48c4.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
Q=$PWD/build-dev/qjit
T=$PWD/.devdeps/tpl
for t in old new old2 new2; do
  tp=$PWD/templates; case $t in new*) tp=$T/P/templates;; esac
  QJIT_TEMPLATE_PATH=$tp QJIT_CACHE_DIR=/tmp/qC-${t%2} timeout 100 $Q bench --scheme w4a8-lqq --sparsity 0.05,0.1 --no-peers --shapes 4096x4096,12288x4096,4096x11008,8192x8192 --m 256,1024,4096 --reps 10 --csv $O/bench-$t.csv > $O/bench-$t.txt 2>&1
  echo "bench $t rc=$? at $(( $(date +%s) - T0 )) s"; grep -iE "mismatch|not exact|error" $O/bench-$t.txt | head -3
done
python3 bench/bench-ab.py $O
(cd build-dev && QJIT_CACHE_DIR=/tmp/qt QJIT_TEST_PIPES="persist=1" CK_RUN_CASE=sparse CK_DEFAULT_TIMEOUT=110 timeout 110 ./test_gpu > $O/gpu-sp.txt 2>&1; echo "rc=$?" >> $O/gpu-sp.txt)
echo "== gpu-sp: $(tail -1 $O/gpu-sp.txt) exact $(grep -c 'acc exact' $O/gpu-sp.txt) at $(( $(date +%s) - T0 )) s"; grep -E ":F:|:E:|mismatch" $O/gpu-sp.txt | head -5
(cd build-dev && QJIT_CACHE_DIR=/tmp/qt CK_RUN_CASE=sparse_llama CK_DEFAULT_TIMEOUT=100 timeout 100 ./test_gpu > $O/gpu-spl.txt 2>&1; echo "rc=$?" >> $O/gpu-spl.txt)
echo "== gpu-spl: $(tail -1 $O/gpu-spl.txt) exact $(grep -c 'acc exact' $O/gpu-spl.txt) at $(( $(date +%s) - T0 )) s"; grep -E ":F:|:E:|mismatch" $O/gpu-spl.txt | head -5
echo "done at $(( $(date +%s) - T0 )) s"
tar -C $O -czf $OUT/c4.tgz .
