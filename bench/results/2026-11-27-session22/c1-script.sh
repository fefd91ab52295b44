#!/usr/bin/env bash
# Prepared in session 21 (not run: no device time left). act-quant marks=1 -- each of a two-part
# token's CTAs reads of the order only the INT8 channels and its own rounds -- against HEAD
# (every CTA reads and gathers the whole order). Before the call, from the repository root:
#   mkdir -p .devdeps/tools .devdeps/ab-marks && cp bench/results/2026-11-26-session21/act_time.c .devdeps/tools/
#   git archive HEAD templates | tar -x -C .devdeps/ab-marks
#   (cd .devdeps/ab-marks && patch -p1 < ../../bench/results/2026-11-26-session21/next-dispatch-marks.diff)
# Prediction: the two-part kernel at K = 28672, M = 1 under ~6 us a CTA (session 21's 8.86 and the
# one-part 5.44 were one CTA's time: that call's timer launched grid z = 1; act_time.c now launches z = P);
# w4ax-s layers at M = 1/16 within ~1 us of w4a4's on 4096x11008 and 8192x28672.
set -u
out=$OUT; T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi -L > $out/device.txt 2>&1; cat $out/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && timeout 240 cmake --build build-dev -j16 --target test_gpu qjit_cli qjit_static) > $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
gcc -O2 -I base -I codegen -I include -I runtime -I cache -I /usr/local/cuda/include .devdeps/tools/act_time.c build-dev/libqjit.a -L/usr/local/cuda/lib64 -lnvrtc -llua5.4 -lm -lpthread -ldl -o act_time >> $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
stamp built
export QJIT_CACHE_DIR=/tmp/qc
(QJIT_TEST_PIPES=no-forced-pipe CK_RUN_CASE=w4axs timeout 230 ./build-dev/test_gpu > $out/gpu-w4axs.txt 2>&1; echo "rc=$?" >> $out/gpu-w4axs.txt) &
(QJIT_TEST_PIPES=no-forced-pipe CK_RUN_CASE=w4ax timeout 230 ./build-dev/test_gpu > $out/gpu-w4ax.txt 2>&1; echo "rc=$?" >> $out/gpu-w4ax.txt) &
wait
stamp gpu
grep -E "Checks|rc=|:F:|:E:|activations" $out/gpu-w4axs.txt $out/gpu-w4ax.txt | head -20
A="kernel=act-quant;arch=sm_90a;bits=8+4;scales=1"
# REF: each kernel's bytes and scales compared with the one-CTA cached kernel's on the same inputs.
REF="$A;cache=16384;threads=512" timeout 30 ./act_time "$A;cache=16384;ctas=6;threads=512" "$A;cache=16384;ctas=6;marks=1;threads=512" > $out/act-time.txt 2>&1
REF="$A;cache=32768;threads=512" timeout 30 ./act_time "$A;cache=32768;ctas=8;threads=512" "$A;cache=32768;ctas=8;marks=1;threads=512" >> $out/act-time.txt 2>&1; echo "rc=$?" >> $out/act-time.txt
cat $out/act-time.txt
stamp timed
B="./build-dev/qjit bench --scheme w4a4,w4ax-s,w4ax --no-peers --reps 10 --m 1,16 --shapes 4096x11008,8192x28672,8192x8192"
QJIT_TEMPLATE_PATH=$PWD/.devdeps/ab-marks/templates timeout 120 $B --csv $out/ab-marks.csv > $out/ab-marks.txt 2>&1; echo "rc=$?" >> $out/ab-marks.txt
stamp marks
timeout 100 $B --csv $out/ab-head.csv > $out/ab-head.txt 2>&1; echo "rc=$?" >> $out/ab-head.txt
stamp head
grep -E "rc=|WRONG|wrong|against" $out/ab-marks.txt $out/ab-head.txt | head
