#!/usr/bin/env bash
# session 23, call 2: GPU cases the first call missed (int4_mma, sparse, w4ax's packed pipes), then the
# M <= 128 table (tokens column, peers) on the first four shapes
set -u
out=$OUT; T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi -L > $out/device.txt 2>&1; cat $out/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && timeout 240 cmake --build build-dev -j16 --target qjit_cli test_gpu) > $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
grep -c -i "warning" $out/build.txt
stamp built
export QJIT_CACHE_DIR=/tmp/qc
./build-dev/qjit compile --defaults > /tmp/compile.txt 2>&1 &
mkdir -p /tmp/g
for c in int4_mma sparse w4ax; do
  (QJIT_TEST_PIPES=$([ $c = w4ax ] && echo mma=s4) CK_RUN_CASE=$c timeout $(( 300 - ($(date +%s) - T0) )) ./build-dev/test_gpu > /tmp/g/gpu-$c.txt 2>&1; echo "rc=$?" >> /tmp/g/gpu-$c.txt) &
done
wait
stamp gpu
tail -1 /tmp/compile.txt
cat /tmp/g/gpu-*.txt > $out/gpu-cases.txt
for c in int4_mma sparse w4ax; do echo "== $c: $(grep -E 'Checks' /tmp/g/gpu-$c.txt) $(tail -1 /tmp/g/gpu-$c.txt) points $(grep -c 'acc exact' /tmp/g/gpu-$c.txt)"; grep -E ":F:|:E:" /tmp/g/gpu-$c.txt | head -5; done
timeout $(( 565 - ($(date +%s) - T0) )) ./build-dev/qjit bench --scheme w4a8-lqq,w4a8-qoq,w4a8-is,w8a8 --m 1,4,16,32,64,128 --reps 10 --shapes 12288x4096,4096x4096,22016x4096,4096x11008 --csv $out/table-a.csv > $out/table-a.txt 2>&1; echo "rc=$?" >> $out/table-a.txt
stamp bench
grep -E "summary|M=|tokens in|WRONG|rc=" $out/table-a.txt | head -60
