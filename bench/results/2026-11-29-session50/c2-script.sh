#!/bin/bash
# Session 50 call 2 (issue 14): branch wip-two-rwarps (written after session 49's device time; CPU: test_key,
# test_compile, no spills or wgmma hazards in the room kernels, the ring kernel's cubin byte-identical to main's).
# In the room (every sparse TMA producer tile but the persistent 128x256 ring) two residual warps take alternate
# K tiles, each with its own cursor (a walk of two tiles a step), on two sub-partitions.
# Why (session 49): on the 128x128 room at one CTA an SM the residual warp's per-tile work paced the ring -- its
# ~25-instruction lookup cost 6-9 points (Xc - Y) and the cheaper walk gave 0.92 on 8192x8192 M = 256; its copies
# cost 10-11 (X - Xc) although issued STAGES tiles ahead. If one warp's iteration (wait, lookup, copy issue,
# arrival) is what paces the ring, two halve its rate; if it is the issue it steals from its sub-partition's MMA
# warps, two spread it.
# Prediction: sparse new/old 0.95-0.98 on the 128x128 room points (M = 128..512), 0.98-1.00 on the few-token TMA
# tiles (M = 16..64), 1.00 on the persistent ring (M >= 512 on most shapes; the same cubin). If ~1.00 everywhere:
# the residual warp is neither the pace nor the issue, and the copies' cost is in the ring's latency.
# Setup on the CPU: rm -rf .devdeps/tpl/B .devdeps/tpl/M && mkdir -p .devdeps/tpl/B .devdeps/tpl/M &&
# git archive wip-two-rwarps templates | tar -x -C .devdeps/tpl/B && git archive main templates | tar -x -C
# .devdeps/tpl/M; cp bench/results/2026-11-29-session49/next-s50c2.sh .devdeps/s50c2.sh. test_gpu takes the
# templates built in: the exactness lanes copy the branch's over the tree's (and put main's back).
T0=$(date +%s)
O=$OUT/c2; mkdir -p $O; cp .devdeps/s50c2.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/ab.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > /tmp/build.txt 2>&1) || { echo BUILD FAILED; tail /tmp/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
T=$PWD/.devdeps/tpl
Q=$PWD/build-dev/qjit
for t in old new old2 new2; do
  v=M; case $t in new*) v=B;; esac
  QJIT_TEMPLATE_PATH=$T/$v/templates QJIT_CACHE_DIR=/tmp/qC-$v timeout 110 $Q bench --scheme w4a8-lqq --sparsity 0.05,0.1 --no-peers --shapes 4096x11008,8192x8192,12288x4096,8192x28672 --m 16,32,64,128,256,512 --reps 10 --csv $O/bench-$t.csv > /tmp/bench-$t.txt 2>&1
  echo "bench $t rc=$? at $(( $(date +%s) - T0 )) s"; grep -iE "mismatch|not exact|error" /tmp/bench-$t.txt | head -3
done
python3 bench/bench-ab.py $O | tee -a $O/ab.txt
rm -rf templates && cp -r $T/B/templates templates
cd build-dev
run_lane() { QJIT_CACHE_DIR=/tmp/qt-$1 QJIT_TEST_SCHEMES=$2 QJIT_TEST_PIPES="$4" CK_RUN_CASE=$3 CK_DEFAULT_TIMEOUT=150 timeout 150 ./test_gpu > /tmp/gpu-$1.txt 2>&1; echo "rc=$?" >> /tmp/gpu-$1.txt; }
run_lane q0 w4a8-qoq sparse "tile=64x128x128;warps=2x4;stages=8;split=2;pipe=tma;producer=wg,tile=128x64x128;warps=1x4;stages=6;split=5;pipe=tma;producer=wg,tile=256x128x128;warps=2x4;stages=4;split=3;pipe=tma;producer=wg,tile=128x64x128;warps=1x4;stages=8;split=2;pipe=tma;reduce=cluster;producer=wg;wu8=1,tile=128x64x128;warps=1x4;stages=6;pipe=tma;producer=wg;persist=1,tile=256x128x128;warps=1x8;stages=5;split=3;pipe=tma;producer=wg;wu8=1,tile=16x64x128;warps=1x4;stages=6;split=2;pipe=tma;reduce=cluster;producer=wg" &
run_lane q1 w4a8-qoq sparse "tile=128x128x128;warps=1x8;stages=6;split=2;pipe=tma;reduce=cluster;producer=wg,tile=128x256x128;warps=1x8;stages=4;split=2;pipe=tma;producer=wg,tile=64x64x128;warps=1x4;stages=8;split=2;pipe=tma;reduce=cluster;producer=wg,tile=256x128x128;warps=2x4;stages=3;pipe=tma;producer=wg;persist=1,tile=128x128x128;warps=1x8;stages=6;split=2;pipe=tma;reduce=cluster;producer=wg;wu8=1,tile=16x64x128;warps=1x4;stages=8;split=2;pipe=tma;reduce=cluster;producer=wg,tile=32x64x128;warps=1x4;stages=8;split=2;pipe=tma;reduce=cluster;producer=wg" &
run_lane l0 w4a8-lqq sparse "tile=64x128x128;warps=2x4;stages=8;split=2;pipe=tma;producer=wg,tile=256x128x128;warps=2x4;stages=4;split=3;pipe=tma;producer=wg,tile=128x64x128;warps=1x4;stages=6;pipe=tma;producer=wg;persist=1,tile=16x64x128;warps=1x4;stages=6;split=2;pipe=tma;reduce=cluster;producer=wg" &
run_lane l1 w4a8-lqq sparse "tile=128x128x128;warps=1x8;stages=6;split=2;pipe=tma;reduce=cluster;producer=wg,tile=64x64x128;warps=1x4;stages=8;split=2;pipe=tma;reduce=cluster;producer=wg,tile=128x128x128;warps=1x8;stages=6;split=2;pipe=tma;reduce=cluster;producer=wg;wu8=1,tile=32x64x128;warps=1x4;stages=8;split=2;pipe=tma;reduce=cluster;producer=wg" &
run_lane l2 w4a8-lqq sparse "tile=128x64x128;warps=1x4;stages=6;split=5;pipe=tma;producer=wg,tile=128x64x128;warps=1x4;stages=8;split=2;pipe=tma;reduce=cluster;producer=wg;wu8=1,tile=256x128x128;warps=1x8;stages=5;split=3;pipe=tma;producer=wg;wu8=1" &
run_lane l3 w4a8-lqq sparse "tile=128x256x128;warps=1x8;stages=4;split=2;pipe=tma;producer=wg,tile=256x128x128;warps=2x4;stages=3;pipe=tma;producer=wg;persist=1,tile=16x64x128;warps=1x4;stages=8;split=2;pipe=tma;reduce=cluster;producer=wg" &
run_lane ll "w4a8-lqq,w4a8-qoq" sparse_llama "" &
wait
cd ..
rm -rf templates && cp -r $T/M/templates templates
for l in q0 q1 l0 l1 l2 l3 ll; do
  echo "== lane $l: $(tail -1 /tmp/gpu-$l.txt) exact $(grep -c 'acc exact' /tmp/gpu-$l.txt), configs: $(grep 'carry a residual' /tmp/gpu-$l.txt | awk '{print $2 $3}' | uniq -c | tr '\n' ' ')"
  grep -E ":F:|:E:|mismatch" /tmp/gpu-$l.txt | head -5
done | tee $O/gpu.txt
cat /tmp/gpu-*.txt > $O/gpu-all.txt
echo "done at $(( $(date +%s) - T0 )) s"
