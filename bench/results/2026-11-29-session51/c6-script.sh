#!/bin/bash
# Session 51 call 6: the suite lanes call 3 left unfinished at 230 s (odd shapes for LQQ and QoQ, every group;
# bf16), alone with more time: the token counts 24 and 200 through the table on the odd shapes.
# Prediction: exact (the kernels at those shapes are session 50's, checked forced).
T0=$(date +%s)
O=$OUT/c6; mkdir -p $O; cp .devdeps/s51c6.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target test_gpu > /tmp/build.txt 2>&1) || { echo BUILD FAILED; tail /tmp/build.txt; exit 1; }
cd build-dev
run_lane() { QJIT_CACHE_DIR=/tmp/qt-$1 QJIT_TEST_SCHEMES=$2 CK_RUN_CASE=$3 CK_DEFAULT_TIMEOUT=290 timeout 290 ./test_gpu > /tmp/gpu-$1.txt 2>&1; echo "rc=$?" >> /tmp/gpu-$1.txt; }
run_lane Ow4a8-lqq w4a8-lqq odd & run_lane Ow4a8-qoq w4a8-qoq odd & run_lane BF "" bf16 &
wait
cd ..
for f in /tmp/gpu-*.txt; do
  echo "== $(basename $f .txt): $(tail -1 $f) exact $(grep -c 'acc exact' $f); $(grep -E '^[0-9]+%' $f)"
  grep -E ":F:|:E:|mismatch" $f | head -5
done | tee $O/gpu.txt
cat /tmp/gpu-*.txt > $O/gpu-all.txt
echo "done at $(( $(date +%s) - T0 )) s"
