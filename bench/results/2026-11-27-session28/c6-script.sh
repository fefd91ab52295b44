#!/bin/bash
# Session 28 call 6 (branch wip-producer-warp at the commit landed): the whole GPU suite, cases in parallel.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD; T0=$(date +%s)
O=/tmp/o; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s28c6.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build.txt 2>&1 || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "warnings: $(grep -ci warning $O/build.txt)"
cases="llama odd pipes_a pipes_b misc sparse sparse_llama w4ax int4_mma w4axs bf16 bias tuning"
for c in $cases; do
  (cd build-dev && QJIT_CACHE_DIR=/tmp/qt-$c CK_RUN_CASE=$c CK_DEFAULT_TIMEOUT=600 timeout $(( 560 - ($(date +%s) - T0) )) ./test_gpu > $O/gpu-$c.txt 2>&1; echo "rc=$?" >> $O/gpu-$c.txt) &
done
wait
for c in $cases; do echo "== $c: $(grep -E 'Checks' $O/gpu-$c.txt) $(tail -1 $O/gpu-$c.txt) points $(grep -c 'exact' $O/gpu-$c.txt)"; grep -E ":F:|:E:" $O/gpu-$c.txt | head -5 | cut -c1-300; done
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c6.tgz .
