#!/bin/bash
# Session 29 call 6: compute-sanitizer (memcheck, racecheck, synccheck) on a persistent kernel walking several tiles a CTA;
# GPU case tuning alone (EXPLORE has persistent candidates); then llama (w8a8, w4a4: their M = 1000 buckets now
# persistent) and odd (w4a8-lqq, w8a8, w4a4: partial N tiles on the persistent kernels at M = 1000) in parallel.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD; T0=$(date +%s)
O=/tmp/o; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s29c6.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build.txt 2>&1 || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
Q=$root/build-dev/qjit
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
for tool in memcheck racecheck synccheck; do
  QJIT_CACHE_DIR=/tmp/qs timeout 100 $SAN --tool $tool --error-exitcode 9 $Q bench --shapes 2048x1024 --m 300 --reps 5 --no-peers \
      --variant "pipe=tma;tile=64x64x128;warps=1x4;stages=8;producer=wg;persist=1;band=2" > $O/san-$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|hazard' $O/san-$tool.txt | head -2 | tr '\n' ' ')"
done
echo "sanitizers done at $(( $(date +%s) - T0 )) s"
(cd build-dev && QJIT_CACHE_DIR=/tmp/qt-tuning CK_RUN_CASE=tuning CK_DEFAULT_TIMEOUT=600 timeout 150 ./test_gpu > $O/gpu-tuning.txt 2>&1; echo "rc=$?" >> $O/gpu-tuning.txt)
echo "tuning: $(grep Checks $O/gpu-tuning.txt) $(tail -1 $O/gpu-tuning.txt) at $(( $(date +%s) - T0 )) s"
(cd build-dev && QJIT_TEST_SCHEMES=w8a8,w4a4 QJIT_CACHE_DIR=/tmp/qt-llama CK_RUN_CASE=llama CK_DEFAULT_TIMEOUT=600 timeout $(( 575 - ($(date +%s) - T0) )) ./test_gpu > $O/gpu-llama.txt 2>&1; echo "rc=$?" >> $O/gpu-llama.txt) &
(cd build-dev && QJIT_TEST_SCHEMES=w4a8-lqq,w8a8,w4a4 QJIT_CACHE_DIR=/tmp/qt-odd CK_RUN_CASE=odd CK_DEFAULT_TIMEOUT=600 timeout $(( 575 - ($(date +%s) - T0) )) ./test_gpu > $O/gpu-odd.txt 2>&1; echo "rc=$?" >> $O/gpu-odd.txt) &
wait
for c in llama odd; do echo "== $c: $(grep -E 'Checks' $O/gpu-$c.txt) $(tail -1 $O/gpu-$c.txt) exact lines $(grep -c 'acc exact' $O/gpu-$c.txt)"; grep -E ":F:|:E:" $O/gpu-$c.txt | head -5 | cut -c1-400; done
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c6.tgz .
