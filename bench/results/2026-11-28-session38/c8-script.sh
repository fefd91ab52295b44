#!/bin/bash
# Session 38 call 8 (H200, branch exp-epi-early-all): the lanes call 7 ran to its deadline, again (bias, w4ax, bf16,
# pipes_b: pipes filtered to the touched tiles), then the table: lqq through the dispatch table (no tuning records)
# at M = 32 / 64 / 128 against the cuBLAS peers.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
T0=$(date +%s)
O=/tmp/o8; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s38c8.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
run_lane() {  # name case pipes
  (cd build-dev && QJIT_TEST_PIPES="$3" QJIT_CACHE_DIR=/tmp/qt2-$1 CK_RUN_CASE=$2 CK_DEFAULT_TIMEOUT=600 timeout 60 ./test_gpu > $O/gpu-$1.txt 2>&1; echo "rc=$?" >> $O/gpu-$1.txt) &
}
F="warps=1x4,pipe=wgmma,tile=64x128x128;warps=1x8"
run_lane bias bias $F; run_lane w4ax w4ax $F; run_lane bf16 bf16 $F; run_lane pb pipes_b "tile=64x64,tile=128x64,tile=32x64"; run_lane misc misc ""
wait
for f in $O/gpu-*.txt; do echo "== $(basename $f): $(grep -E 'Checks' $f) $(tail -1 $f) exact $(grep -c 'acc exact' $f)"; grep -E ":F:|:E:|WRONG|mismatch" $f | head -3 | cut -c1-300; done
echo "tests done at $(( $(date +%s) - T0 )) s"
left=$(( 190 - ($(date +%s) - T0) ))
QJIT_CACHE_DIR=/tmp/qtab timeout $left build-dev/qjit bench --scheme w4a8-lqq --m 32,64,128 --reps 20 --csv $O/table.csv --json $O/table.json > $O/table.txt 2>&1
echo "table rc=$? at $(( $(date +%s) - T0 )) s"
sed -n '/^summary/,/^host/p' $O/table.txt | head -12
tar -C $O -czf $OUT/c8.tgz .
