#!/bin/bash
# Session 49 call 3 (issue 14): branch wip-walk (the tree travels checked out on it; main's templates in
# .devdeps/tpl/M). The residual's cursor as an in-order walk: per lane its word's entry, the next one requested
# ahead, where the walk leaves the word (end) and the lane's place in a kept block, so a lookup is a compare, a
# bit test and a popcount (main: the word recomputed from nb and k64 every lookup, a branch on nb past N, an
# integer modulo by the row's word count on a change of word). SASS: cp.async 32x64 twin 1744 -> 1560
# instructions, the stage load's lookup ~25 -> ~12 on its common path; room 128x128 1520 -> 1464.
# Why (session 49 call 1): the cp.async twin at M = 32 loses 12-20 points to warp 0's lookup in the stage load
# (X - Xw), on the path of every warp to the tile's wgmma; the room tile 6-9 points to the residual warp's
# lookups (Xc - Y), issued beside the MMA warps of its SM sub-partition.
# Prediction: sparse new/old 0.90-0.96 on the cp.async M = 32 points, 0.96-0.99 on the room tile's, ~0.99 on
# the persistent ring's; dense 1.00. Then exactness, four lanes at once (compile-bound): the sparse case over
# decode, cp.async wgmma and multistage; over the residual rings (rpieces, rslots); over the TMA split pipes;
# the sparse Llama layers.
T0=$(date +%s)
O=$OUT/c3; mkdir -p $O; cp .devdeps/s49c3.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/ab.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > /tmp/build.txt 2>&1) || { echo BUILD FAILED; tail /tmp/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
T=$PWD/.devdeps/tpl
Q=$PWD/build-dev/qjit
for t in old new old2 new2; do
  tp=$T/M/templates; c=/tmp/qC-M; case $t in new*) tp=$PWD/templates; c=/tmp/qC-B;; esac
  QJIT_TEMPLATE_PATH=$tp QJIT_CACHE_DIR=$c timeout 110 $Q bench --scheme w4a8-lqq --sparsity 0.05,0.1 --no-peers --shapes 4096x4096,12288x4096,8192x8192,10240x8192 --m 1,16,32,64,128,256,512 --reps 10 --csv $O/bench-$t.csv > /tmp/bench-$t.txt 2>&1
  echo "bench $t rc=$? at $(( $(date +%s) - T0 )) s"; grep -iE "mismatch|not exact|error" /tmp/bench-$t.txt | head -3
done
python3 bench/bench-ab.py $O | tee -a $O/ab.txt
cd build-dev
run_lane() { QJIT_CACHE_DIR=/tmp/qt-$1 QJIT_TEST_PIPES="$2" CK_RUN_CASE=$3 CK_DEFAULT_TIMEOUT=170 timeout 170 ./test_gpu > /tmp/gpu-$1.txt 2>&1; echo "rc=$?" >> /tmp/gpu-$1.txt; }
run_lane a "pipe=decode,pipe=wgmma,warps=2x2,tile=32x128x128,actq=fused" sparse &
run_lane b "rpieces=,rslots=" sparse &
run_lane c "split=2;pipe=tma,split=3;pipe=tma,split=4;pipe=tma,split=5;pipe=tma,persist=1" sparse &
run_lane d "" sparse_llama &
wait
cd ..
for l in a b c d; do
  echo "== lane $l: $(tail -1 /tmp/gpu-$l.txt) exact $(grep -c 'acc exact' /tmp/gpu-$l.txt), pipes: $(grep -o 'pipe=[a-z]*' /tmp/gpu-$l.txt | sort | uniq -c | tr '\n' ' ')"
  grep -E ":F:|:E:|mismatch" /tmp/gpu-$l.txt | head -5
  grep -o "carry a residual" /tmp/gpu-$l.txt | wc -l
done | tee $O/gpu.txt
cat /tmp/gpu-a.txt /tmp/gpu-b.txt /tmp/gpu-c.txt /tmp/gpu-d.txt > $O/gpu-all.txt
echo "done at $(( $(date +%s) - T0 )) s"
