#!/usr/bin/env bash
# session 21, call 1: scatter=1 picked by dispatch -- GPU activation/layer tests, then A/B against HEAD (cached gather) on the bench, each point checked bit-exact
set -u
out=$OUT; T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi -L > $out/device.txt 2>&1; cat $out/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && timeout 240 cmake --build build-dev -j16 --target test_gpu qjit_cli) > $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
stamp built
export QJIT_CACHE_DIR=/tmp/qc
(QJIT_TEST_PIPES=no-forced-pipe CK_RUN_CASE=w4axs timeout 200 ./build-dev/test_gpu > $out/gpu-w4axs.txt 2>&1; echo "rc=$?" >> $out/gpu-w4axs.txt) &
(QJIT_TEST_PIPES=no-forced-pipe CK_RUN_CASE=w4ax timeout 200 ./build-dev/test_gpu > $out/gpu-w4ax.txt 2>&1; echo "rc=$?" >> $out/gpu-w4ax.txt) &
wait
stamp gpu
grep -E "Checks|rc=|:F:|:E:" $out/gpu-w4axs.txt $out/gpu-w4ax.txt | head -20
B="./build-dev/qjit bench --scheme w4a4,w4ax-s,w4ax --no-peers --reps 10 --m 1,16,256,4096 --shapes 4096x4096,4096x11008,8192x28672"
timeout 120 $B --csv $out/ab-scatter.csv > $out/ab-scatter.txt 2>&1; echo "rc=$?" >> $out/ab-scatter.txt
stamp new
QJIT_TEMPLATE_PATH=$PWD/.devdeps/ab-head20/templates timeout 100 $B --csv $out/ab-head.csv > $out/ab-head.txt 2>&1; echo "rc=$?" >> $out/ab-head.txt
stamp head
grep -E "rc=|WRONG|wrong" $out/ab-scatter.txt $out/ab-head.txt | head
