#!/bin/bash
# Session 53 call 1: the whole GPU suite on the merged HEAD (session 52: the sparse 32-token ring rule, split-K
# partials four to a 16-byte store, the fix-up's slices rolled, the producer's first token copies rolled), in
# lanes with the longest cases in shares (QJIT_TEST_SHARD), 16 at once, under the call's deadline.
# Prediction: every lane exact; what runs out of time is listed in gpu.txt (rc=124 / notrun): run those
# with RERUN=<this gpu.txt> in the next call.
# Setup: cp bench/results/2026-11-29-session52/next-s53c1.sh .devdeps/s53c1.sh
T0=$(date +%s)
export OUT=$OUT/c1; mkdir -p $OUT; cp .devdeps/s53c1.sh $OUT/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target test_gpu > /tmp/build.txt 2>&1) || { echo BUILD FAILED; tail /tmp/build.txt; exit 1; }
bash bench/gpu-lanes.sh 16 400 $(( 560 - ($(date +%s) - T0) )); echo "lanes rc=$? at $(( $(date +%s) - T0 )) s"
