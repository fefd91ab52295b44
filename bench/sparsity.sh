#!/usr/bin/env bash
# The sparsity budget on the GPU machine (issue 14): the sparse kernels'
# GPU tests, then the latency of every budget against the dense layers
# (`qjit bench --sparsity`, no cuBLAS peers: their times are in the full
# table), then `qjit demo --sparsity 0.1`. From the project root, after a
# build into build-dev (see bench/device-tests.sh):
#   bash bench/sparsity.sh [tests] [bench] [demo] [ring]   (the first three by default)
# Tables and CSVs go to $OUT (or ./out). SHAPES=NxK,... and MS=1,16,...
# narrow the bench (default: the eight Llama shapes x M = 1..4096);
# BUDGETS (default 0.05,0.1,0.2), SCHEMES (default lqq,qoq), REPS (20).
# ring: the TMA tiles of M >= 256 with the residual in a ring of its own
# (key field rslots) against the dispatch table's sparse kernels, forced at
# M = 256..4096 (ring.csv; ring-summary.txt: each forced row over the dense
# layer at the same M).
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
if [[ $want == *" ring "* ]]; then
  V=()
  for v in "pipe=tma;tile=128x128x128;warps=1x8;stages=4;split=1;rslots=1" \
           "pipe=tma;tile=128x128x128;warps=1x8;stages=6;split=1;rslots=2"; do V+=(--variant "$v"); done
  $Q bench --scheme "${SCHEMES:-lqq}" --sparsity "${BUDGETS:-0.05,0.1}" --no-peers --reps "${REPS:-20}" \
     ${SHAPES:+--shapes "$SHAPES"} --m "${MS:-256,512,1024,4096}" "${V[@]}" --csv "$out/ring.csv" > "$out/ring.txt" 2>&1 || rc=1
  # Columns: N,K,M,qjit_us,...,variant(11),forced(12),scheme(13),group(14),sparsity(15).
  awk -F, 'NR > 1 && $15 == 0 && $12 == 0 { d[$1 "x" $2 " " $3] = $4 }
           NR > 1 && $15 > 0 { r[NR] = $1 "x" $2 " " $3; t[NR] = $4; v[NR] = ($12 ? $11 : "dispatch"); s[NR] = $15 }
           END { for (i in r) if (d[r[i]] > 0)
                   printf "%s rho=%s %+6.1f%%  %s\n", r[i], s[i], (t[i] / d[r[i]] - 1) * 100, v[i] }' \
      "$out/ring.csv" | sort -k1,1 -k2,2n -k3,3 > "$out/ring-summary.txt"
  cat "$out/ring-summary.txt"
fi
if [[ $want == *" demo "* ]]; then
  $Q demo --sparsity 0.1 --seed 1 > "$out/demo-sparse.txt" 2>&1 || rc=1
  tail -8 "$out/demo-sparse.txt"
fi
exit $rc
