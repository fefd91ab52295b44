#!/bin/bash
# Session 29 call 3: the persistent pipes (every scheme, forced; persistent_tiles: many tiles a CTA, in bands) after the
# setmaxnreg pool fix, then the table of every W4A8/W8A8 scheme against cuBLAS at M = 128..4096.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD; T0=$(date +%s)
O=/tmp/o; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s29c3.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build.txt 2>&1 || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
Q=$root/build-dev/qjit
for c in pipes_a pipes_b; do
  (cd build-dev && QJIT_TEST_PIPES=persist=1 QJIT_CACHE_DIR=/tmp/qt-$c CK_RUN_CASE=$c CK_DEFAULT_TIMEOUT=600 timeout 220 ./test_gpu > $O/gpu-$c.txt 2>&1; echo "rc=$?" >> $O/gpu-$c.txt) &
done
wait
for c in pipes_a pipes_b; do echo "== $c: $(grep -E 'Checks' $O/gpu-$c.txt) $(tail -1 $O/gpu-$c.txt) exact lines $(grep -c 'acc exact' $O/gpu-$c.txt)"; grep -E ":F:|:E:" $O/gpu-$c.txt | head -5 | cut -c1-400; done
echo "tests done at $(( $(date +%s) - T0 )) s"
QJIT_CACHE_DIR=/tmp/qb timeout $(( 590 - ($(date +%s) - T0) )) $Q bench --scheme w4a8-lqq,w4a8-qoq,w4a8-is,w8a8 --m 128,256,512,1024,4096 --reps 20 --csv $O/table.csv --json $O/table.json > $O/table.txt 2>&1
echo "bench rc=$?"
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c3.tgz .
