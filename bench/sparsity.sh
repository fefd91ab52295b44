#!/usr/bin/env bash
# The sparsity budget on the GPU machine (issue 14): the sparse kernels'
# GPU tests, then the latency of every budget against the dense layers
# (`qjit bench --sparsity`, no cuBLAS peers: their times are in the full
# table), then `qjit demo --sparsity 0.1`. From the project root, after a
# build into build-dev (see bench/device-tests.sh):
#   bash bench/sparsity.sh [tests] [bench] [demo]      (all three by default)
# Tables and CSVs go to $OUT (or ./out). SHAPES=NxK,... and MS=1,16,...
# narrow the bench (default: the eight Llama shapes x M = 1..4096);
# BUDGETS (default 0.05,0.1,0.2), SCHEMES (default lqq,qoq), REPS (20).
set -uo pipefail
out=${OUT:-out}
mkdir -p "$out"
Q=./build-dev/qjit
want=" ${*:-tests bench demo} "
export QJIT_CACHE_DIR=${QJIT_CACHE_DIR:-/tmp/qjit-sparsity-cache}
rc=0
if [[ $want == *" tests "* ]]; then
  for c in sparse sparse_llama; do
    CK_RUN_CASE=$c ./build-dev/test_gpu > "$out/gpu-$c.txt" 2>&1 || rc=1
    tail -1 "$out/gpu-$c.txt"
  done
fi
if [[ $want == *" bench "* ]]; then
  $Q bench --scheme "${SCHEMES:-lqq,qoq}" --sparsity "${BUDGETS:-0.05,0.1,0.2}" --no-peers --reps "${REPS:-20}" \
     ${SHAPES:+--shapes "$SHAPES"} ${MS:+--m "$MS"} --csv "$out/sparsity.csv" > "$out/sparsity.txt" 2>&1 || rc=1
  sed -n '/^sparsity /,/^$/p' "$out/sparsity.txt"
fi
if [[ $want == *" demo "* ]]; then
  $Q demo --sparsity 0.1 --seed 1 > "$out/demo-sparse.txt" 2>&1 || rc=1
  tail -8 "$out/demo-sparse.txt"
fi
exit $rc
