#!/bin/bash
# Session 47 call 2 (issue 14): two candidates against main, qjit bench (the metric) alternating M A B M A B.
# A (wip-fold-ahead): the fold path's residual loads issued with the step's weights (SASS: only the persistent
#   128x256 rpieces kernels change; ptxas had already hoisted them on the plain room).
# B (wip-fold-nosplit, on A): no per-tile split: every tile runs the fold steps, the presence word loaded beside
#   the weights (SASS 128x128: TRYWAIT -> LDS rbits | LDS gp | LDS.128 weights -> dequant -> fold if any -> IGMMA;
#   main: TRYWAIT -> LDS rbits -> VOTE -> BRA -> LDS.128 weights ...).
# Prediction: A 0.98-1.00 at M >= 256, 1.00 elsewhere; B 0.95-0.98 where the tile's MMAs are short (128x128 and
#   64x64 tiles, M = 32..256: the LDS before the weights' loads sits on the consumer's critical path), ~1.00 at 1024.
T0=$(date +%s)
O=/tmp/o2; rm -rf $O; mkdir -p $O/A $O/B
cp .devdeps/s47c2.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
T=$PWD/.devdeps/tpl
(cd build-dev && QJIT_TEMPLATE_PATH=$T/B/templates QJIT_CACHE_DIR=/tmp/qt QJIT_TEST_PIPES="pipe=tma" CK_RUN_CASE=sparse CK_DEFAULT_TIMEOUT=60 timeout 100 ./test_gpu > $O/gpu-sp-B.txt 2>&1; echo "rc=$?" >> $O/gpu-sp-B.txt)
echo "== gpu-sp B: $(tail -1 $O/gpu-sp-B.txt) exact $(grep -c 'acc exact' $O/gpu-sp-B.txt) at $(( $(date +%s) - T0 )) s"; grep -E ":F:|:E:|mismatch" $O/gpu-sp-B.txt | head -5
Q=$PWD/build-dev/qjit
for t in M A B M2 A2 B2; do
  v=${t%2}
  QJIT_TEMPLATE_PATH=$T/$v/templates QJIT_CACHE_DIR=/tmp/qC-$v timeout 110 $Q bench --scheme w4a8-lqq --sparsity 0.05,0.1 --no-peers --shapes 4096x4096,12288x4096,4096x11008,8192x8192 --m 16,32,64,128,256,1024 --reps 10 --csv $O/bench-$t.csv > $O/bench-$t.txt 2>&1
  echo "bench $t rc=$? at $(( $(date +%s) - T0 )) s"; grep -iE "mismatch|not exact|error" $O/bench-$t.txt | head -3
done
for v in A B; do
  cp $O/bench-M.csv $O/$v/bench-old.csv; cp $O/bench-M2.csv $O/$v/bench-old2.csv
  cp $O/bench-$v.csv $O/$v/bench-new.csv; cp $O/bench-${v}2.csv $O/$v/bench-new2.csv
  echo "#### $v against main"; python3 bench/bench-ab.py $O/$v | grep -v "^old"
done
echo "done at $(( $(date +%s) - T0 )) s"
tar -C $O -czf $OUT/c2.tgz .
