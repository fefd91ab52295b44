#!/bin/bash
# Session 47 call 4 (issue 14): exactness of main as landed (5429bb6: C on MI = 1, main's code on MI >= 2) on the
# LLaMA-shaped sparse layers and the wgmma / persistent sparse pipes.
T0=$(date +%s)
O=/tmp/o4; rm -rf $O; mkdir -p $O
cp .devdeps/s47c4.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target test_gpu > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
for f in "sparse_llama::100" "sparse:pipe=wgmma,persist=1:70"; do
  c=${f%%:*}; r=${f#*:}; pipes=${r%:*}; lim=${r##*:}
  (cd build-dev && QJIT_CACHE_DIR=/tmp/qt QJIT_TEST_PIPES="$pipes" CK_RUN_CASE=$c CK_DEFAULT_TIMEOUT=$lim timeout $lim ./test_gpu > $O/gpu-$c.txt 2>&1; echo "rc=$?" >> $O/gpu-$c.txt)
  echo "== $c [$pipes]: $(tail -1 $O/gpu-$c.txt) exact $(grep -c 'acc exact' $O/gpu-$c.txt) at $(( $(date +%s) - T0 )) s"; grep -E ":F:|:E:|mismatch" $O/gpu-$c.txt | head -5; grep -E "^[0-9]+%" $O/gpu-$c.txt
done
tar -C $O -czf $OUT/c4.tgz .
