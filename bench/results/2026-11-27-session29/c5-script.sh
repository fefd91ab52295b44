#!/bin/bash
# Session 29 call 5: the activation kernel's divisions as multiplies (round_quot); A/B of a warp a row
# (act-quant rows=4) past 512 tokens: A = templates with it off, B = on; w4a8-lqq, no peers.
# Then GPU cases misc (activation kernels, one-part: CTA a row, ctas, rows) and llama, in parallel.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD; T0=$(date +%s)
O=/tmp/o; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s29c5.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build.txt 2>&1 || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
Q=$root/build-dev/qjit
rm -rf /tmp/tpl-a && cp -r templates /tmp/tpl-a && sed -i 's/^D.ACT_ROWS_M = 512$/D.ACT_ROWS_M = 1 << 30/' /tmp/tpl-a/dispatch.lua
grep -n "^D.ACT_ROWS_M" /tmp/tpl-a/dispatch.lua templates/dispatch.lua
QJIT_TEMPLATE_PATH=/tmp/tpl-a QJIT_CACHE_DIR=/tmp/qa timeout 150 $Q bench --m 256,512,1024,4096 --reps 20 --no-peers --csv $O/a.csv --json /tmp/ja > $O/a.txt 2>&1
echo "A rc=$? at $(( $(date +%s) - T0 )) s"
QJIT_CACHE_DIR=/tmp/qb timeout 150 $Q bench --m 256,512,1024,4096 --reps 20 --no-peers --csv $O/b.csv --json /tmp/jb > $O/b.txt 2>&1
echo "B rc=$? at $(( $(date +%s) - T0 )) s"
for c in misc llama; do
  (cd build-dev && QJIT_CACHE_DIR=/tmp/qt-$c CK_RUN_CASE=$c CK_DEFAULT_TIMEOUT=600 timeout $(( 580 - ($(date +%s) - T0) )) ./test_gpu > $O/gpu-$c.txt 2>&1; echo "rc=$?" >> $O/gpu-$c.txt) &
done
wait
for c in misc llama; do echo "== $c: $(grep -E 'Checks' $O/gpu-$c.txt) $(tail -1 $O/gpu-$c.txt) exact lines $(grep -c 'acc exact' $O/gpu-$c.txt)"; grep -E ":F:|:E:" $O/gpu-$c.txt | head -5 | cut -c1-400; done
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c5.tgz .
