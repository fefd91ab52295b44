#!/bin/bash
# Session 52 call 1: the whole GPU suite on the table as landed in session 51 (a005ab5: the few-token tiles past
# 8192 rows), in lanes (bench/gpu-lanes.sh: a test case each, split per scheme where it is large), 14 at a time:
# session 51 ran the llama, odd and sparse_llama cases only; its bf16 lane (every scheme at once) did not finish
# in 290 s.
# Prediction: every lane exact (no kernel changed; the table's new keys are exact on 11008x4096 in every scheme).
# Setup: cp bench/results/2026-11-29-session51/next-s52c1.sh .devdeps/s52c1.sh
T0=$(date +%s)
export OUT=$OUT/c1; mkdir -p $OUT; cp .devdeps/s52c1.sh $OUT/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target test_gpu > /tmp/build.txt 2>&1) || { echo BUILD FAILED; tail /tmp/build.txt; exit 1; }
bash bench/gpu-lanes.sh 16 400 $(( 560 - ($(date +%s) - T0) )); echo "lanes rc=$? at $(( $(date +%s) - T0 )) s"
