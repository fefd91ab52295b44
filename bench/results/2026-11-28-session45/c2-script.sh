#!/bin/bash
# Session 45 call 2 (issue 14): where one residual copy's cost shows. Trees X (MMA warps dense steps only, the
# residual still looked up and copied), Xc (found, not copied), Xe (X with the residual warp's arrival and byte
# count before its copies), each instrumented (per-CTA K-tile landing stamps; slot 30 = the K tiles whose stage
# carries a residual block). Prediction: in X the CTAs with a residual block see one K-tile gap of ~0.5 us at
# (or just before) that tile, and the slowest CTA is one of them; in Xc no such gap.
T0=$(date +%s)
O=/tmp/o2; rm -rf $O; mkdir -p $O
cp .devdeps/s45c2.sh $O/script.sh; cp .devdeps/s45mk.sh $O/mk.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli qjit_stamps > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
bash .devdeps/s45mk.sh templates /tmp/tr45 || exit 1
echo "built $(( $(date +%s) - T0 )) s"
for pt in "4096 4096 64" "4096 4096 256" "8192 8192 128"; do
  n=$(echo $pt | tr ' ' x)
  for t in X Xc Xe; do
    QJIT_TEMPLATE_PATH=/tmp/tr45/$t/templates QJIT_CACHE_DIR=/tmp/q45-$t timeout 100 build-dev/qjit_stamps $pt - 12 0.01 > $O/st-$t-$n.txt 2>&1
    echo "$t $n: $(grep -c '^QS' $O/st-$t-$n.txt) QS lines, event med $(grep '^rep' $O/st-$t-$n.txt | awk '{print $4}' | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}') us at $(( $(date +%s) - T0 )) s"
  done
done
timeout 200 python3 bench/stamps/ab.py build-dev/qjit_stamps /tmp/tr45/raw/X/templates /tmp/tr45/raw/Xe/templates --rho 0.01 4096x4096x64 4096x4096x256 8192x8192x128 12288x4096x128 2>&1 | tee $O/ab-X-Xe.txt
echo "done at $(( $(date +%s) - T0 )) s"
tar -C $O -czf $OUT/c2.tgz .
