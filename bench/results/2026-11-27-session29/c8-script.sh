#!/bin/bash
# Session 29 call 8: racecheck on the persistent pipes through test_gpu (as session 28's c3 for producer=wg):
# pipes_b, QJIT_TEST_PIPES=persist=1 (the forced pipes' two persistent tiles and persistent_tiles' 64x64 tiles,
# several a CTA at M = 1000), w4a8-lqq g=128.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD; T0=$(date +%s)
O=/tmp/o; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s29c8.sh $O/script.sh
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target test_gpu > $O/build.txt 2>&1 || { echo BUILD FAILED; exit 1; }
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
(cd build-dev && QJIT_TEST_SCHEMES=w4a8-lqq QJIT_TEST_PIPES="persist=1;band=3" QJIT_CACHE_DIR=/tmp/qt CK_FORK=no CK_RUN_CASE=pipes_b CK_DEFAULT_TIMEOUT=300 timeout 230 $SAN --tool racecheck ./test_gpu) > $O/san-racecheck.txt 2>&1
echo "racecheck rc=$? $(grep -E 'Checks|RACECHECK SUMMARY' $O/san-racecheck.txt | tr '\n' ' ') at $(( $(date +%s) - T0 )) s"
grep "acc exact" $O/san-racecheck.txt | head
tar -C $O -czf $OUT/c8.tgz .
