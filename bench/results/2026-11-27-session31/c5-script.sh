#!/bin/bash
# Session 31 call 5 (after call 4 hung: waiting for a slot by parity across the other warpgroup's phases; the main loops now take turns): pingpong=1 (two MMA warpgroups taking whole persistent tiles in turn, cuBLAS INT8's form per
# call 3's ncu). (1) exactness: every forced pingpong pipe, every scheme group (pipes_a, pipes_b with
# QJIT_TEST_PIPES=pingpong=1); (2) A/B against the table on the default shapes at M = 256..4096 (lqq 128x128 s6,
# w8a8 128x128 s4), GEMM alone and forward; (3) racecheck on the persistent pingpong test (w4a8-lqq), time allowing.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD; T0=$(date +%s)
O=/tmp/o; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s31c5.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build.txt 2>&1 || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
Q=$root/build-dev/qjit
echo "built $(( $(date +%s) - T0 )) s"
for c in pipes_a pipes_b; do
  (cd build-dev && QJIT_TEST_PIPES="pingpong=1" QJIT_CACHE_DIR=/tmp/qt-$c CK_RUN_CASE=$c CK_DEFAULT_TIMEOUT=600 timeout 130 ./test_gpu > $O/gpu-$c.txt 2>&1; echo "rc=$?" >> $O/gpu-$c.txt) &
done
wait
fail=0
for c in pipes_a pipes_b; do echo "== $c: $(grep -E 'Checks' $O/gpu-$c.txt) $(tail -1 $O/gpu-$c.txt) exact lines $(grep -c 'acc exact' $O/gpu-$c.txt) refused $(grep -c 'refused' $O/gpu-$c.txt)"; grep -E ":F:|:E:" $O/gpu-$c.txt | head -5 | cut -c1-400; grep -q -E ":F:|:E:" $O/gpu-$c.txt && fail=1; done
echo "tests done at $(( $(date +%s) - T0 )) s"
[ $fail = 1 ] && { tar -C $O -czf $OUT/c5.tgz .; exit 1; }
P6="pipe=tma;tile=128x128x128;warps=1x8;stages=6;producer=wg;persist=1;pingpong=1"
P4="pipe=tma;tile=128x128x128;warps=1x8;stages=4;producer=wg;persist=1;pingpong=1"
QJIT_CACHE_DIR=/tmp/qb timeout 160 $Q bench --no-peers --m 256,512,1024,4096 --reps 10 --variant "$P6" --csv $O/pp-lqq.csv > $O/pp-lqq.txt 2>&1
echo "bench lqq rc=$? at $(( $(date +%s) - T0 )) s"
sed -n '/^forced variants/,/^$/p' $O/pp-lqq.txt
QJIT_CACHE_DIR=/tmp/qb timeout 110 $Q bench --scheme w8a8 --no-peers --m 256,512,1024,4096 --reps 10 --variant "$P4" --csv $O/pp-w8a8.csv > $O/pp-w8a8.txt 2>&1
echo "bench w8a8 rc=$? at $(( $(date +%s) - T0 )) s"
sed -n '/^forced variants/,/^$/p' $O/pp-w8a8.txt
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
left=$(( 470 - ($(date +%s) - T0) ))
if [ $left -gt 30 ]; then
  (cd build-dev && QJIT_TEST_SCHEMES=w4a8-lqq QJIT_TEST_PIPES="pingpong=1;band=3" QJIT_CACHE_DIR=/tmp/qs CK_FORK=no CK_RUN_CASE=pipes_b CK_DEFAULT_TIMEOUT=600 timeout $left $SAN --tool racecheck ./test_gpu) > $O/san-racecheck.txt 2>&1
  echo "racecheck rc=$? $(grep -E 'Checks|RACECHECK SUMMARY' $O/san-racecheck.txt | tr '\n' ' ') exact $(grep -c 'acc exact' $O/san-racecheck.txt) at $(( $(date +%s) - T0 )) s"
fi
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c5.tgz .
