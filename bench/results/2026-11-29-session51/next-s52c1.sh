#!/bin/bash
# Session 52 call 1: the whole GPU suite on the table as landed in session 51 (a005ab5: the few-token tiles past
# 8192 rows), in lanes (a tcase, split per scheme where it is large), 14 at a time: session 51 ran the llama, odd
# and sparse_llama cases only; its bf16 lane (every scheme at once) did not finish in 290 s.
# Prediction: every lane exact (no kernel changed; the table's new keys are exact on 11008x4096 in every scheme).
# Setup: cp bench/results/2026-11-29-session51/next-s52c1.sh .devdeps/s52c1.sh
T0=$(date +%s)
O=$OUT/c1; mkdir -p $O; cp .devdeps/s52c1.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target test_gpu > /tmp/build.txt 2>&1) || { echo BUILD FAILED; tail /tmp/build.txt; exit 1; }
cd build-dev
lane() {   # lane NAME CASE SCHEMES
  QJIT_CACHE_DIR=/tmp/qt-$1 QJIT_TEST_SCHEMES=$3 CK_RUN_CASE=$2 CK_DEFAULT_TIMEOUT=500 timeout 500 ./test_gpu > /tmp/gpu-$1.txt 2>&1
  echo "rc=$?" >> /tmp/gpu-$1.txt
}
export -f lane
{
  for s in w4a8-lqq w4a8-qoq w4a8-is w8a8 w4a4; do
    for c in pipes_a pipes_b bf16 bias odd llama; do echo "$c-$s $c $s"; done
  done
  for c in bf16 bias; do echo "$c-2part $c w4ax,w4ax-s"; done   # the two-part layers of those cases
  for c in sparse sparse_llama misc w4ax int4_mma w4axs tuning sk; do echo "$c $c ''"; done
} | xargs -P 14 -L 1 bash -c 'lane "$0" "$1" "$2"'
cd ..
for f in /tmp/gpu-*.txt; do
  echo "== $(basename $f .txt): $(tail -1 $f) exact $(grep -c 'exact' $f); $(grep -E '^[0-9]+%' $f)"
  grep -E ":F:|:E:|mismatch" $f | head -5
done | tee $O/gpu.txt
cat /tmp/gpu-*.txt > $O/gpu-all.txt
echo "done at $(( $(date +%s) - T0 )) s"
