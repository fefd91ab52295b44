#!/bin/bash
# Session 28 call 7 (branch wip-producer-warp): the GPU cases call 6 left unfinished or that failed:
# tuning alone first (it times kernels: nothing else on the GPU), then odd, bf16, sparse in parallel.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD; T0=$(date +%s)
O=/tmp/o; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s28c7.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build.txt 2>&1 || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
(cd build-dev && QJIT_CACHE_DIR=/tmp/qt-tuning CK_RUN_CASE=tuning CK_DEFAULT_TIMEOUT=600 timeout 200 ./test_gpu > $O/gpu-tuning.txt 2>&1; echo "rc=$?" >> $O/gpu-tuning.txt)
echo "tuning done at $(( $(date +%s) - T0 )) s"
cases="odd bf16 sparse"
for c in $cases; do
  (cd build-dev && QJIT_TEST_PIPES=$( [ $c = odd ] || echo producer=wg ) QJIT_CACHE_DIR=/tmp/qt-$c CK_RUN_CASE=$c CK_DEFAULT_TIMEOUT=600 timeout $(( 480 - ($(date +%s) - T0) )) ./test_gpu > $O/gpu-$c.txt 2>&1; echo "rc=$?" >> $O/gpu-$c.txt) &
done
wait
for c in tuning $cases; do echo "== $c: $(grep -E 'Checks' $O/gpu-$c.txt) $(tail -1 $O/gpu-$c.txt) points $(grep -c 'exact' $O/gpu-$c.txt)"; grep -E ":F:|:E:" $O/gpu-$c.txt | head -5 | cut -c1-300; done
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c7.tgz .
