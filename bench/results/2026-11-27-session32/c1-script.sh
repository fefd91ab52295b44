#!/bin/bash
# Session 32 call 1: sk=1 (stream-K for a persistent kernel's last wave). (1) exactness: the stream_k lane (three
# forced sk pipes x every scheme group x two layers, each M twice), and the persistent pipes of pipes_a/pipes_b
# (the work loop now walks a plan for every persistent kernel); (2) if exact: lqq 128x256 s4 persist sk=1
# against the table at M = 256, 512, 1024, 4096 (default shapes, GEMM alone and forward).
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD; T0=$(date +%s)
O=/tmp/o; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s32c1.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build.txt 2>&1 || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
Q=$root/build-dev/qjit
echo "built $(( $(date +%s) - T0 )) s"
run_lane() {  # name case pipes schemes
  (cd build-dev && QJIT_TEST_PIPES="$3" QJIT_TEST_SCHEMES="$4" QJIT_CACHE_DIR=/tmp/qt-$1 CK_RUN_CASE=$2 CK_DEFAULT_TIMEOUT=600 timeout 250 ./test_gpu > $O/gpu-$1.txt 2>&1; echo "rc=$?" >> $O/gpu-$1.txt) &
}
S1="w4a8-lqq,w4a8-qoq"; S2="w4a8-is,w8a8,w4a4"
run_lane sk64-1 stream_k "sk=1;band=3" $S1
run_lane sk64-2 stream_k "sk=1;band=3" $S2
run_lane sk256-1 stream_k "warps=1x8;stages=4;pipe=tma;producer=wg;persist=1;sk=1" $S1
run_lane sk256-2 stream_k "warps=1x8;stages=4;pipe=tma;producer=wg;persist=1;sk=1" $S2
run_lane skx-1 stream_k "sk=1;excp=1" $S1
run_lane skx-2 stream_k "sk=1;excp=1" $S2
run_lane pa-1 pipes_a "persist=1" $S1
run_lane pa-2 pipes_a "persist=1" $S2
run_lane pb-1 pipes_b "persist=1" $S1
run_lane pb-2 pipes_b "persist=1" $S2
wait
fail=0
for f in $O/gpu-*.txt; do echo "== $(basename $f): $(grep -E 'Checks' $f) $(tail -1 $f) exact $(grep -c 'acc exact' $f) refused $(grep -c 'refused' $f)"; grep -E ":F:|:E:" $f | head -4 | cut -c1-400; grep -q -E ":F:|:E:" $f && fail=1; done
echo "tests done at $(( $(date +%s) - T0 )) s"
[ $fail = 1 ] && { tar -C $O -czf $OUT/c1.tgz .; exit 1; }
SK="pipe=tma;tile=128x256x128;warps=1x8;stages=4;producer=wg;persist=1;sk=1"
left=$(( 560 - ($(date +%s) - T0) ))
QJIT_CACHE_DIR=/tmp/qb timeout $left $Q bench --no-peers --m 256,512,1024,4096 --reps 10 --variant "$SK" --csv $O/sk-lqq.csv > $O/sk-lqq.txt 2>&1
echo "bench lqq rc=$? at $(( $(date +%s) - T0 )) s"
sed -n '/^forced variants/,/^$/p' $O/sk-lqq.txt
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c1.tgz .
