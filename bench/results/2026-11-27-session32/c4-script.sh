#!/bin/bash
# Session 32 call 4: the dispatch table with sk=1 (persistent 128x256 sk from N >= 10240 at M = 129..256, N >= 8192
# at 257..512, every layer past 512; w8a8's persistent 256x128 with sk): (1) llama lane (every scheme through the
# table, M up to 4096); (2) the sk lane for w4a8-qoq (call 3's lanes ran out of time there) and pipes_b's persistent
# pipes for qoq; (3) compute-sanitizer memcheck / racecheck / synccheck on the sk lane, w4a8-lqq, 64x64 sk pipe.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD; T0=$(date +%s)
O=/tmp/o4; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s32c4.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build.txt 2>&1 || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
run_lane() {  # name case pipes schemes
  (cd build-dev && QJIT_TEST_PIPES="$3" QJIT_TEST_SCHEMES="$4" QJIT_CACHE_DIR=/tmp/qt-$1 CK_RUN_CASE=$2 CK_DEFAULT_TIMEOUT=600 timeout 300 ./test_gpu > $O/gpu-$1.txt 2>&1; echo "rc=$?" >> $O/gpu-$1.txt) &
}
run_lane llama llama "" ""
run_lane sk64-q sk "sk=1;band=3" w4a8-qoq
run_lane sk256-q sk "warps=1x8;stages=4;pipe=tma;producer=wg;persist=1;sk=1" w4a8-qoq
run_lane skx-q sk "sk=1;excp=1" w4a8-qoq
run_lane pb-q pipes_b "persist=1" w4a8-qoq
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck synccheck; do
  (cd build-dev && QJIT_TEST_SCHEMES=w4a8-lqq QJIT_TEST_PIPES="sk=1;band=3" QJIT_CACHE_DIR=/tmp/qs-$tool CK_FORK=no CK_RUN_CASE=sk CK_DEFAULT_TIMEOUT=600 timeout 300 $SAN --tool $tool ./test_gpu > $O/san-$tool.txt 2>&1; echo "rc=$?" >> $O/san-$tool.txt) &
done
wait
for f in $O/gpu-*.txt; do echo "== $(basename $f): $(grep -E 'Checks' $f) $(tail -1 $f) exact $(grep -c 'acc exact' $f) refused $(grep -c 'refused' $f)"; grep -E ":F:|:E:" $f | head -4 | cut -c1-400; done
for f in $O/san-*.txt; do echo "== $(basename $f): $(grep -E 'Checks|ERROR SUMMARY|RACECHECK SUMMARY' $f | tr '\n' ' ') $(tail -1 $f) exact $(grep -c 'acc exact' $f)"; done
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c4.tgz .
