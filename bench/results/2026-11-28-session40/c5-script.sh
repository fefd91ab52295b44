#!/bin/bash
# Session 40 call 5: where the sparse kernels' fixed cost goes, per CTA (bench/stamps, instrumented templates):
# the dispatch table's kernel on a random w4a8-lqq layer, dense against a residual on 1 % / 10 % of its blocks:
# 12288x4096 at M = 64 (64x64; dense 8 stages, sparse 6) and M = 128 (128x128, 6 stages both), 4096x4096 M = 64.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
T0=$(date +%s)
O=/tmp/o5; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s40c5.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_stamps > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
TS=/tmp/tpl-st; python3 bench/stamps/instrument.py templates $TS/templates
for c in "12288 4096 64" "12288 4096 128" "4096 4096 64"; do for r in 0 0.01 0.1; do
  n=$(echo "$c $r" | tr ' ' '-')
  QJIT_CACHE_DIR=/tmp/qst QJIT_TEMPLATE_PATH=$TS/templates timeout 60 build-dev/qjit_stamps $c - 24 $r > $O/st-$n.txt 2>&1; echo "st $n rc=$? $(grep variant $O/st-$n.txt | sed 's/actq=kernel;arch=sm_90a;epi=f16;g=128;kernel=gemm;//')"
  QJIT_CACHE_DIR=/tmp/qst timeout 60 build-dev/qjit_stamps $c - 24 $r > $O/ev-$n.txt 2>&1
  echo "   event us (plain templates), best 3: $(grep -E '^rep .* event' $O/ev-$n.txt | awk '{print $4}' | sort -n | head -3 | tr '\n' ' ')"
  python3 bench/stamps/phases.py $O/st-$n.txt | awk '/ launch /{p = / launch 22:/} p' > $O/ph-$n.txt
  cat $O/ph-$n.txt
done; done
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c5.tgz .
