#!/bin/bash
# Session 34 call 3: wu8=1 in the table (the working tree of the commit). (1) the lqq lanes call 2 left at their
# deadline (sk, odd, bf16) with longer ones, racecheck and synccheck on a wu8 kernel, concurrently; (2) then alone
# on the GPU, the table with the cuBLAS peers: w4a8-lqq and w8a8, M = 16..4096.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD; T0=$(date +%s)
O=/tmp/o3; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s34c3.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build.txt 2>&1 || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
L=w4a8-lqq
run_lane() {  # name case pipes schemes
  (cd build-dev && QJIT_TEST_PIPES="$3" QJIT_TEST_SCHEMES="$4" QJIT_CACHE_DIR=/tmp/qt-$1 CK_RUN_CASE=$2 CK_DEFAULT_TIMEOUT=600 timeout 270 ./test_gpu > $O/gpu-$1.txt 2>&1; echo "rc=$?" >> $O/gpu-$1.txt) &
}
run_lane sk sk "" $L
run_lane odd odd "" $L
run_lane bf16 bf16 "" $L
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
(for tool in synccheck racecheck; do
  QJIT_CACHE_DIR=/tmp/qs-$tool timeout 260 $SAN --tool $tool --error-exitcode 9 build-dev/qjit bench --scheme $L --shapes 2048x1024 --m 200 --reps 5 --no-peers \
      --variant "pipe=tma;tile=128x128x128;warps=1x8;stages=6;producer=wg;persist=1;sk=1;wu8=1" > $O/san-$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $O/san-$tool.txt | head -1)" >> $O/san.txt
done) &
wait
cat $O/san.txt
for f in $O/gpu-*.txt; do echo "== $(basename $f): $(grep -E 'Checks' $f) $(tail -1 $f) exact $(grep -c 'acc exact' $f) refused $(grep -c 'refused' $f)"; grep -E ":F:|:E:" $f | head -3 | cut -c1-300; done
echo "tests done at $(( $(date +%s) - T0 )) s"
QJIT_CACHE_DIR=/tmp/qb timeout $(( 585 - ($(date +%s) - T0) )) build-dev/qjit bench --scheme w4a8-lqq,w8a8 --m 16,64,128,256,512,1024,4096 --reps 10 --csv $O/table.csv --json $O/table.json > $O/table.txt 2>&1
echo "bench rc=$?"
sed -n '/^summary/,$p' $O/table.txt | head -40
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c3.tgz .
