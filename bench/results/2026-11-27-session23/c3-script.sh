#!/usr/bin/env bash
# session 23, call 3: the M <= 128 table (tokens column, peers) on the last four shapes
set -u
out=$OUT; T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi -L > $out/device.txt 2>&1; cat $out/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && timeout 240 cmake --build build-dev -j16 --target qjit_cli) > $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
stamp built
export QJIT_CACHE_DIR=/tmp/qc
timeout $(( 400 - ($(date +%s) - T0) )) ./build-dev/qjit bench --scheme w4a8-lqq,w4a8-qoq,w4a8-is,w8a8 --m 1,4,16,32,64,128 --reps 10 --shapes 10240x8192,8192x8192,57344x8192,8192x28672 --csv $out/table-b.csv > $out/table-b.txt 2>&1; echo "rc=$?" >> $out/table-b.txt
stamp bench
grep -E "summary|M=|tokens in|WRONG|rc=" $out/table-b.txt | head -70
