#!/usr/bin/env bash
# session 20, call 7: act-quant scatter=1 (every M, one value a byte) against HEAD (gather; cached up to 256 tokens) -- each point checked bit-exact by the bench
set -u
out=$OUT; T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi -L > $out/device.txt 2>&1; cat $out/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && timeout 200 cmake --build build-dev -j16 --target qjit_cli) > $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
stamp built
export QJIT_CACHE_DIR=/tmp/qc
B="./build-dev/qjit bench --scheme w4a4,w4ax-s,w4ax --no-peers --reps 10 --m 1,16,256,4096 --shapes 4096x4096,4096x11008,8192x28672"
timeout 100 $B --csv $out/ab-scatter.csv > $out/ab-scatter.txt 2>&1; echo "rc=$?" >> $out/ab-scatter.txt
stamp new
QJIT_TEMPLATE_PATH=$PWD/.devdeps/ab-head20/templates timeout 90 $B --csv $out/ab-head.csv > $out/ab-head.txt 2>&1; echo "rc=$?" >> $out/ab-head.txt
stamp head
grep -E "^w4|rc=|WRONG|wrong" $out/ab-scatter.txt $out/ab-head.txt | head -60
