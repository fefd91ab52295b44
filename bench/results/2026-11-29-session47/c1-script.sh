#!/bin/bash
# Session 47 call 2 (issue 14): branch wip-mma-presence (b917707, written after session 46's device time ran out): the
# MMA warps of a sparse TMA kernel with the plain residual room find each tile's residual blocks themselves (their
# own cursor over rmask) before they wait for the tile, instead of loading the stage's presence word after the wait
# (SASS of S: TRYWAIT -> LDS rbits -> VOTE -> BRA -> the weights' LDS.128; now the vote is made before the wait).
# Setup on the CPU: rm -rf .devdeps/tpl/P && mkdir -p .devdeps/tpl/P && git archive wip-mma-presence templates |
# tar -x -C .devdeps/tpl/P; .devdeps/tpl/M = main's templates; bench/bench-ab.py summarises.
# Prediction: S - X was 3-4 points at rho 0.01 (session 46 call 5); the shared load's ~30-40 cycles a tile on the
# MMA warps' path is most of it if the ring is latency-bound: new/old 0.97-0.99 (stamps and qjit bench), the 25
# or so more ALU instructions a tile (off the wait's path) cost nothing measurable; exact on every TMA pipe.
T0=$(date +%s)
O=/tmp/o2; rm -rf $O; mkdir -p $O
cp .devdeps/s47c2.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli qjit_stamps test_gpu > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
OLD=$PWD/.devdeps/tpl/M/templates; NEW=$PWD/.devdeps/tpl/P/templates
(cd build-dev && QJIT_TEMPLATE_PATH=$NEW QJIT_CACHE_DIR=/tmp/qt QJIT_TEST_PIPES="pipe=tma" CK_RUN_CASE=sparse CK_DEFAULT_TIMEOUT=60 timeout 120 ./test_gpu > $O/gpu-sp.txt 2>&1; echo "rc=$?" >> $O/gpu-sp.txt)
echo "== gpu-sp: $(tail -1 $O/gpu-sp.txt) exact $(grep -c 'acc exact' $O/gpu-sp.txt) at $(( $(date +%s) - T0 )) s"; grep -E ":F:|:E:|mismatch" $O/gpu-sp.txt | head -5
timeout 130 python3 bench/stamps/ab.py build-dev/qjit_stamps $OLD $NEW 12288x4096x128 4096x4096x64 4096x4096x256 8192x8192x128 4096x4096x16 4096x11008x64 2>&1 | tee $O/ab.txt
Q=$PWD/build-dev/qjit
for t in new old new2 old2; do
  TP=$NEW; case $t in old*) TP=$OLD;; esac
  QJIT_TEMPLATE_PATH=$TP QJIT_CACHE_DIR=/tmp/qC-${t%2} timeout 110 $Q bench --scheme w4a8-lqq --sparsity 0.05,0.1 --no-peers --shapes 4096x4096,12288x4096,4096x11008,8192x8192 --m 16,32,64,128,256,1024 --reps 10 --csv $O/bench-$t.csv > $O/bench-$t.txt 2>&1
  echo "bench $t rc=$? at $(( $(date +%s) - T0 )) s"
done
python3 bench/bench-ab.py $O
echo "done at $(( $(date +%s) - T0 )) s"
tar -C $O -czf $OUT/c2.tgz .
