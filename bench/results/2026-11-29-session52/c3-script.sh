#!/bin/bash
# Session 52 call 3 (issue 14): the sparse M = 17..32 rule past 8192 rows as landed (the 32-token TMA tile at
# split 2, 6 stages, the residual in a ring of 32 places, where N / 64 <= 1.5 x SMs), then the GPU suite's lanes
# that call 1 left unfinished, in shares (QJIT_TEST_SHARD), with the tuning test's fix and sparse_llama (12288x4096
# at M = 24 now runs the ring).
# Prediction: the table at M = 32 as c2's forced ring (10240x8192 ~25.5, 11008x4096 ~17.6, 12288x4096 ~17.8 us at
# rho 0.05), M = 24 the same; every lane exact.
T0=$(date +%s)
export OUT=$OUT/c3; mkdir -p $OUT; cp .devdeps/s52c3.sh $OUT/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target test_gpu qjit_cli > /tmp/build.txt 2>&1) || { echo BUILD FAILED; tail /tmp/build.txt; exit 1; }
echo "built at $(( $(date +%s) - T0 )) s"
Q=$PWD/build-dev/qjit
QJIT_CACHE_DIR=/tmp/qS timeout 120 $Q bench --scheme w4a8-lqq,w4a8-qoq --sparsity 0.05,0.1 --no-peers --shapes 10240x8192,11008x4096,12288x4096,14336x4096 --m 24,32 --reps 10 --csv $OUT/m32.csv > $OUT/m32.txt 2>&1
echo "m32 rc=$? at $(( $(date +%s) - T0 )) s"; grep -iE "mismatch|not exact|error" $OUT/m32.txt | head -3
python3 - $OUT <<'P' | tee $OUT/summary.txt
import csv, sys, collections
d = collections.defaultdict(dict)
for r in csv.DictReader(open(f'{sys.argv[1]}/m32.csv')):
    d[(r['scheme'], int(r['N']), int(r['K']), int(r['M']))][float(r['sparsity'])] = float(r['tokens_us'])
for k in sorted(d):
    dn = d[k].get(0.0)
    print(k, 'dense %.2f' % dn if dn else '', ' '.join('rho %s %.2f (%+.1f%%)' % (s, u, 100 * (u / dn - 1)) for s, u in sorted(d[k].items()) if s > 0 and dn))
P
LANES='^(sparse|sparse_llama|tuning|sk-w4a8-lqq|misc|w4ax)(\.|$)' bash bench/gpu-lanes.sh 16 400 $(( 395 - ($(date +%s) - T0) )); echo "lanes rc=$? at $(( $(date +%s) - T0 )) s"
