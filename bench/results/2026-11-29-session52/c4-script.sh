#!/bin/bash
# Session 52 call 4: (a) issue 14: the M = 17..32 ring rule for the other sparse scheme (QoQ, g = 128), the table
# against the split-1 tile it replaced, at the three layers it applies to; (b) issue 12: the GPU suite's lanes that
# run split-K partials (global and stream-K) and two-part sums on the compile-time branch's templates
# (wip-compile-s52: partials four to a 16-byte store, the fix-up's slices rolled, the producer's first token copies
# rolled), in shares.
# Prediction: (a) the ring 0.85-0.95 of the split-1 tile as for LQQ; (b) every lane exact.
T0=$(date +%s)
export OUT=$OUT/c4; mkdir -p $OUT; cp .devdeps/s52c4.sh $OUT/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target test_gpu qjit_cli > /tmp/build.txt 2>&1) || { echo BUILD FAILED; tail /tmp/build.txt; exit 1; }
echo "built at $(( $(date +%s) - T0 )) s"
QJIT_CACHE_DIR=/tmp/qS timeout 70 ./build-dev/qjit bench --scheme w4a8-qoq --sparsity 0.1 --no-peers --shapes 10240x8192,11008x4096,12288x4096 --m 24,32 --reps 10 \
  --variant "pipe=tma;tile=32x64x128;warps=1x4;stages=8;split=1;producer=wg" --csv $OUT/qoq.csv > $OUT/qoq.txt 2>&1
echo "qoq rc=$? at $(( $(date +%s) - T0 )) s"
grep -v "^qjit bench" $OUT/qoq.txt | awk 'NF>10{print $3,$4,$5,$6,$7,$15,$16}'
export QJIT_TEMPLATE_PATH=$PWD/.devdeps/tpl/W/templates
LANES='^(sk-.*|pipes_b-.*|w4ax|w4axs|bf16-2part)(\.|$)' bash bench/gpu-lanes.sh 16 400 $(( 262 - ($(date +%s) - T0) )); echo "lanes rc=$? at $(( $(date +%s) - T0 )) s"
