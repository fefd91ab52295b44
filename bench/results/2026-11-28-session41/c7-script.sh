#!/bin/bash
# Session 41 call 7 (branch wip-sparse-rrun, the runs found by the residual's warp before its first arrival, TMA
# pipe only): w4a8-lqq GEMM alone, 4 shapes, rho 0, 0.01, 0.1, M = 64..1024 (main's numbers: call 6, same device);
# stamps; the sparse GPU suite on the TMA pipes (3 processes), sparse_llama and memcheck.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
T0=$(date +%s)
O=/tmp/o7; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s41c7.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu qjit_stamps > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
QJIT_CACHE_DIR=/tmp/qN timeout 100 build-dev/qjit bench --scheme w4a8-lqq --sparsity 0.01,0.1 --no-peers --shapes 4096x4096,12288x4096,4096x11008,8192x8192 --m 64,128,256,1024 --reps 20 --csv $O/ab-N.csv > $O/ab-N.txt 2>&1
echo "bench rc=$? at $(( $(date +%s) - T0 )) s"
TS=/tmp/tpl-st; python3 bench/stamps/instrument.py templates $TS/templates > /dev/null
for sh in "4096 4096 64 0" "4096 4096 64 0.01" "12288 4096 128 0.01"; do
  set -- $sh
  QJIT_CACHE_DIR=/tmp/qst QJIT_TEMPLATE_PATH=$TS/templates timeout 60 build-dev/qjit_stamps $1 $2 $3 - 24 $4 > $O/st-$1x$2m$3-$4.txt 2>&1
  python3 bench/stamps/phases.py $O/st-$1x$2m$3-$4.txt | awk '/ launch /{p = / launch 22:/} p' > $O/ph-$1x$2m$3-$4.txt
  echo "$1x$2 M=$3 rho=$4: $(grep -E 'K tile 0 landed|gap tile (0->1|8->9)|CTA duration' $O/ph-$1x$2m$3-$4.txt | awk '{printf "%s %s %s %s  ", $1, $2, $3, $(NF-6)}')"
done
echo "stamps done at $(( $(date +%s) - T0 )) s"
cd build-dev
G=("producer=wg;persist,producer=wg;excp,pingpong,rslots"
   "split=2;pipe=tma;producer=wg,split=5;pipe=tma;producer=wg,split=3;pipe=tma;producer=wg,reduce=cluster;producer=wg"
   "stages=5;split=2;pipe=tma,stages=4;split=2;pipe=tma;reduce=cluster,split=3;pipe=tma;reduce=cluster,split=4;pipe=tma;reduce=cluster,stages=6;split=5;pipe=tma")
for i in 0 1 2; do
  (QJIT_TEST_PIPES="${G[$i]}" QJIT_CACHE_DIR=/tmp/qt$i CK_RUN_CASE=sparse CK_DEFAULT_TIMEOUT=600 timeout 150 ./test_gpu > $O/gpu-sp$i.txt 2>&1; echo "rc=$?" >> $O/gpu-sp$i.txt) &
done
(QJIT_CACHE_DIR=/tmp/qt9 CK_RUN_CASE=sparse_llama CK_DEFAULT_TIMEOUT=600 timeout 150 ./test_gpu > $O/gpu-spl.txt 2>&1; echo "rc=$?" >> $O/gpu-spl.txt) &
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
(QJIT_TEST_PIPES="tile=64x64x128;warps=1x4;stages=8;split=2;pipe=tma;reduce=cluster;producer=wg,tile=128x128x128;warps=1x8;stages=4;split=2;pipe=tma;reduce=cluster" \
   QJIT_CACHE_DIR=/tmp/qs CK_RUN_CASE=sparse CK_DEFAULT_TIMEOUT=600 timeout 150 $SAN --tool memcheck --error-exitcode 9 ./test_gpu > $O/san-memcheck.txt 2>&1; echo "memcheck rc=$?" > $O/san.txt) &
wait; cat $O/san.txt; tail -2 $O/san-memcheck.txt
for f in $O/gpu-sp*.txt; do echo "== $(basename $f): $(grep -E '^[0-9]+%: Checks' $f) $(tail -1 $f) exact $(grep -c 'acc exact' $f)"; grep -E ":F:|:E:" $f | head -3; done
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c7.tgz .
