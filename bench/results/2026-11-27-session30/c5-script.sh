#!/bin/bash
# Session 30 call 5: the final tree (act_div + the activation kernel's threads by K from 256 tokens): bench w4a8-lqq
# on 3 shapes, then the GPU cases with activation kernels through the table, in parallel, to a 265 s deadline.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD; T0=$(date +%s)
O=/tmp/o; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s30c5.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build.txt 2>&1 || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
Q=$root/build-dev/qjit
QJIT_CACHE_DIR=/tmp/qc-final timeout 60 $Q bench --shapes 4096x4096,4096x14336,8192x28672 --m 1,16,256,1024,4096 --no-peers --reps 20 --csv $O/final.csv > $O/final.txt 2>&1
cut -d, -f1-4,11,17 $O/final.csv | sed 's/;arch=.*;pipe=/ pipe=/'
echo "bench done $(( $(date +%s) - T0 )) s"
lane() {
  local name=$1; shift
  for c in "$@"; do
    left=$(( 265 - ($(date +%s) - T0) )); [ $left -lt 15 ] && { echo "no time for $c" > $O/gpu-$name-$c.txt; continue; }
    (cd build-dev && QJIT_CACHE_DIR=/tmp/qt-$name CK_RUN_CASE=$c CK_DEFAULT_TIMEOUT=600 timeout $left ./test_gpu > $O/gpu-$name-$c.txt 2>&1; echo "rc=$?" >> $O/gpu-$name-$c.txt)
  done
}
lane a misc &
lane b w4axs &
QJIT_TEST_SCHEMES=w4a8-lqq,w4a8-qoq,w4a4 lane c llama &
QJIT_TEST_SCHEMES=w8a8,w4a8-is lane e llama &
lane d bf16 &
wait
for f in $O/gpu-*.txt; do echo "== $(basename $f): $(grep -E 'Checks' $f) $(tail -n 1 $f) exact lines $(grep -c 'acc exact' $f)"; grep -E ":F:|:E:" $f | head -5 | cut -c1-400; done
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c5.tgz .
