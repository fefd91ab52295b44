#!/bin/bash
# Session 48 call 2 (issue 14): branch wip-rpieces-any (d0e5168, written after session 47's device time ran out,
# CPU-checked: keys compile without spills, test_key passes): a ring of residual blocks of any multiple of 8
# places, and the table's persistent 128x256 twin taking the most that fit in shared memory: 56 instead of 32.
# Setup on the CPU: rm -rf .devdeps/tpl/R && mkdir -p .devdeps/tpl/R && git archive wip-rpieces-any templates |
# tar -x -C .devdeps/tpl/R; .devdeps/tpl/M = main's templates; test_gpu built from the branch's tests (the two new
# forced pipes: rpieces=24 on 64x64, not a power of two, and the table's 56): git archive wip-rpieces-any tests |
# tar -x -C .devdeps/tpl/R and copy tests/test_gpu.c over before the build (the script does).
# Why: the bench's calibration-weighted blocks lie along a few K columns (session 47, residual-tiles.txt): at rho
# 0.1 on 12288x4096 the 256x128 tiles at K tiles 10 and 13 carry 16-32 of their 32 blocks. A ring of 32 places
# holds one such tile: the next one's copies wait until the first is read, with a lead of ~2 K tiles instead of 4.
# Prediction: persistent points (M = 256, 1024) new/old 0.93-0.97 at rho 0.1, 0.97-1.00 at 0.05; every other
# point unchanged (same kernels). Exact on the two new forced pipes.
T0=$(date +%s)
O=/tmp/o2; rm -rf $O; mkdir -p $O
cp .devdeps/s48c2.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cp .devdeps/tpl/R/tests/test_gpu.c tests/test_gpu.c
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
T=$PWD/.devdeps/tpl
(cd build-dev && QJIT_TEMPLATE_PATH=$T/R/templates QJIT_CACHE_DIR=/tmp/qt QJIT_TEST_PIPES="rpieces=24,rpieces=56" CK_RUN_CASE=sparse CK_DEFAULT_TIMEOUT=90 timeout 90 ./test_gpu > $O/gpu-sp.txt 2>&1; echo "rc=$?" >> $O/gpu-sp.txt)
echo "== gpu-sp: $(tail -1 $O/gpu-sp.txt) exact $(grep -c 'acc exact' $O/gpu-sp.txt) at $(( $(date +%s) - T0 )) s"; grep -E ":F:|:E:|mismatch" $O/gpu-sp.txt | head -5
Q=$PWD/build-dev/qjit
for t in old new old2 new2; do
  v=M; case $t in new*) v=R;; esac
  QJIT_TEMPLATE_PATH=$T/$v/templates QJIT_CACHE_DIR=/tmp/qC-$v timeout 100 $Q bench --scheme w4a8-lqq --sparsity 0.05,0.1 --no-peers --shapes 4096x4096,12288x4096,4096x11008,8192x8192 --m 256,1024,4096 --reps 10 --csv $O/bench-$t.csv > $O/bench-$t.txt 2>&1
  echo "bench $t rc=$? at $(( $(date +%s) - T0 )) s"; grep -iE "mismatch|not exact|error" $O/bench-$t.txt | head -3
done
python3 bench/bench-ab.py $O
echo "done at $(( $(date +%s) - T0 )) s"
tar -C $O -czf $OUT/c2.tgz .
