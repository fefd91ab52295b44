#!/bin/bash
# Session 51 call 2: the GPU suite's table tests with a token count in every bucket (MS gained 24 and 200 in
# session 50: the Llama layers had never run the M <= 32 bucket through dispatch, whose kernels changed in
# session 50), every scheme, in parallel lanes (NVRTC-bound): llama, odd, sparse_llama, bf16.
# Prediction: all exact (session 50 checked those kernels forced and through qjit bench).
# Setup: cp bench/results/2026-11-29-session50/next-s51c2.sh .devdeps/s51c2.sh
O=$OUT/c2; mkdir -p $O; cp .devdeps/s51c2.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target test_gpu > /tmp/build.txt 2>&1) || { echo BUILD FAILED; tail /tmp/build.txt; exit 1; }
T0=$(date +%s)
cd build-dev
run_lane() { QJIT_CACHE_DIR=/tmp/qt-$1 QJIT_TEST_SCHEMES=$2 CK_RUN_CASE=$3 CK_DEFAULT_TIMEOUT=280 timeout 280 ./test_gpu > /tmp/gpu-$1.txt 2>&1; echo "rc=$?" >> /tmp/gpu-$1.txt; }
for s in w4a8-lqq w4a8-qoq w4a8-is w8a8 w4a4; do run_lane L$s $s llama & run_lane O$s $s odd & done
run_lane SL "" sparse_llama &
run_lane BF "" bf16 &
wait
cd ..
for f in /tmp/gpu-*.txt; do
  echo "== $(basename $f .txt): $(tail -1 $f) exact $(grep -c 'acc exact' $f); $(grep -E '^[0-9]+%' $f)"
  grep -E ":F:|:E:|mismatch" $f | head -5
done | tee $O/gpu.txt
cat /tmp/gpu-*.txt > $O/gpu-all.txt
echo "done at $(( $(date +%s) - T0 )) s"
