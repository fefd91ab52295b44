#!/bin/bash
# Session 39 call 7 (main f720ef1): issue 16's step on the H200 -- Llama-2-7B's four linears x 32 layers, each its own
# weights, one CUDA graph (and eager), M = 1..64, against cuBLAS; then the same step at M = 32 / 64 on the templates
# before the producer warpgroup's table (e655e19), no peers.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
T0=$(date +%s)
O=/tmp/o7; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s39c7.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
Q=$PWD/build-dev/qjit
QJIT_CACHE_DIR=/tmp/qn timeout 150 $Q bench --layers 32 --scheme lqq --reps 10 --csv $O/step-new.csv > $O/step-new.txt 2>&1
echo "step new rc=$? at $(( $(date +%s) - T0 )) s"
grep -E "^(cublas-fp8|w4a8-lqq) " $O/step-new.txt | head -30
sed -n '/^summary/,$p' $O/step-new.txt | head -20
left=$(( 270 - ($(date +%s) - T0) ))
QJIT_CACHE_DIR=/tmp/qo QJIT_TEMPLATE_PATH=$orig/.devdeps/tpl/O/templates timeout $left $Q bench --layers 32 --scheme lqq --m 32,64 --no-peers --reps 10 --csv $O/step-old.csv > $O/step-old.txt 2>&1
echo "step old rc=$? at $(( $(date +%s) - T0 )) s"
grep -E "^w4a8-lqq " $O/step-old.txt | head
tar -C $O -czf $OUT/c7.tgz .
