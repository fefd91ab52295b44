#!/usr/bin/env bash
# Session 22, call 8: the issue-15 table, second half (table b), on the tree of call 7.
set -u
out=$OUT; T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi -L > $out/device.txt 2>&1; cat $out/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && timeout 240 cmake --build build-dev -j16 --target qjit_cli) > $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
stamp built
export QJIT_CACHE_DIR=/tmp/qc
timeout 560 ./build-dev/qjit bench --scheme w4a8-lqq,w4a4,w4ax,w4ax-s --no-peers --reps 20 --shapes 10240x8192,57344x8192,8192x28672,8192x8192 --csv $out/table-b.csv > $out/table-b.txt 2>&1; echo "rc=$?" >> $out/table-b.txt
stamp table
grep -E "rc=|WRONG|wrong|against|  M=" $out/table-b.txt | head -80
