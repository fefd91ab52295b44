#!/bin/bash
# Session 29 call 7: racecheck on a smaller persistent case (call 6's ran past its 100 s), GPU case tuning again alone.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD; T0=$(date +%s)
O=/tmp/o; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s29c7.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build.txt 2>&1 || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
Q=$root/build-dev/qjit
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
QJIT_CACHE_DIR=/tmp/qs timeout 170 $SAN --tool racecheck --error-exitcode 9 $Q bench --shapes 2048x512 --m 300 --reps 5 --no-peers \
    --variant "pipe=tma;tile=64x64x128;warps=1x4;stages=8;producer=wg;persist=1;band=2" > $O/san-racecheck.txt 2>&1
echo "racecheck rc=$? $(grep -E 'ERROR SUMMARY|hazard' $O/san-racecheck.txt | head -2 | tr '\n' ' ') at $(( $(date +%s) - T0 )) s"
(cd build-dev && QJIT_CACHE_DIR=/tmp/qt-tuning CK_RUN_CASE=tuning CK_DEFAULT_TIMEOUT=600 timeout 150 ./test_gpu > $O/gpu-tuning.txt 2>&1; echo "rc=$?" >> $O/gpu-tuning.txt)
echo "tuning: $(grep Checks $O/gpu-tuning.txt) $(tail -1 $O/gpu-tuning.txt) at $(( $(date +%s) - T0 )) s"
grep -E ":F:|:E:" $O/gpu-tuning.txt | cut -c1-300
tar -C $O -czf $OUT/c7.tgz .
