#!/bin/bash
# Session 29 call 2: the table with persist=1 (large_wg: persistent 128x256 for 4-bit weights from 129 tokens on wide layers,
# past 512 on all): GPU cases llama and the persistent pipes (pipes_b) in parallel; 8-bit weights on persistent tiles
# (forced); ncu of the persistent 128x256 kernel.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD; T0=$(date +%s)
O=/tmp/o; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s29c2.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build.txt 2>&1 || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
Q=$root/build-dev/qjit
echo "built at $(( $(date +%s) - T0 )) s"
(cd build-dev && QJIT_CACHE_DIR=/tmp/qt-llama CK_RUN_CASE=llama CK_DEFAULT_TIMEOUT=600 timeout 330 ./test_gpu > $O/gpu-llama.txt 2>&1; echo "rc=$?" >> $O/gpu-llama.txt) &
(cd build-dev && QJIT_TEST_PIPES=persist=1 QJIT_CACHE_DIR=/tmp/qt-pb CK_RUN_CASE=pipes_b CK_DEFAULT_TIMEOUT=600 timeout 330 ./test_gpu > $O/gpu-pipes_b.txt 2>&1; echo "rc=$?" >> $O/gpu-pipes_b.txt) &
wait
for c in llama pipes_b; do echo "== $c: $(grep -E 'Checks' $O/gpu-$c.txt) $(tail -1 $O/gpu-$c.txt) exact lines $(grep -c 'acc exact' $O/gpu-$c.txt)"; grep -E ":F:|:E:" $O/gpu-$c.txt | head -5 | cut -c1-400; done
echo "tests done at $(( $(date +%s) - T0 )) s"
export QJIT_CACHE_DIR=/tmp/qp
V=()
for v in "g=0;pipe=tma;tile=256x128x128;warps=2x4;stages=4;producer=wg" "g=0;pipe=tma;tile=256x128x128;warps=2x4;stages=3;producer=wg;persist=1" \
         "g=0;pipe=tma;tile=128x256x128;warps=1x8;stages=3;producer=wg;persist=1"; do V+=(--variant "$v"); done
timeout $(( 470 - ($(date +%s) - T0) )) $Q bench --scheme w8a8 --shapes 28672x4096,8192x8192,57344x8192 --m 256,512,4096 --reps 10 --no-peers "${V[@]}" --csv $O/w8.csv --json /tmp/j > $O/w8.txt 2>&1
echo "w8 bench rc=$? at $(( $(date +%s) - T0 )) s"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
timeout $(( 585 - ($(date +%s) - T0) )) $NCU --kernel-name regex:qjit_gemm_tma --launch-count 3 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats \
    --section Occupancy --section LaunchStats --section SchedulerStats \
    $Q bench --shapes 28672x4096 --m 4096 --reps 2 --no-peers --variant "pipe=tma;tile=128x256x128;warps=1x8;stages=4;producer=wg;persist=1" > $O/ncu.txt 2>&1
echo "ncu rc=$?"
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c2.tgz .
