#!/bin/bash
# Session 45 call 4 (issue 14): call 3 again without the slot-30 stamp (thread 0's extra shared load and branch
# each tile biased every sparse kernel's pace), over D, S (rho 0.01, 0.1) and the trees X, Xc, Y, Z, Z2 at 0.01.
# Prediction: S's excess over D is in the per-tile pace (K tile 0 -> 23), not the first tile or the tail;
# the pace steps down tree by tree to Z2 ~ D.
T0=$(date +%s)
O=/tmp/o4; rm -rf $O; mkdir -p $O
cp .devdeps/s45c4.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli qjit_stamps > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
rm -rf /tmp/tr46; python3 bench/stamps/trees.py templates /tmp/tr46/raw X Xc Y Z Z2 > /dev/null
python3 bench/stamps/instrument.py templates /tmp/tr46/M/templates > /dev/null
for t in X Xc Y Z Z2; do python3 bench/stamps/instrument.py /tmp/tr46/raw/$t/templates /tmp/tr46/$t/templates > /dev/null; done
echo "built $(( $(date +%s) - T0 )) s"
for pt in "4096 4096 64" "4096 4096 256" "8192 8192 128" "12288 4096 128"; do
  n=$(echo $pt | tr ' ' x)
  for run in "D M 0" "S1 M 0.01" "S10 M 0.1" "X X 0.01" "Xc Xc 0.01" "Y Y 0.01" "Z Z 0.01" "Z2 Z2 0.01" "D2 M 0"; do
    set -- $run
    QJIT_TEMPLATE_PATH=/tmp/tr46/$2/templates QJIT_CACHE_DIR=/tmp/q46-$2 timeout 100 build-dev/qjit_stamps $pt - 14 $3 > $O/st-$1-$n.txt 2>&1
  done
  echo "$n at $(( $(date +%s) - T0 )) s"
done
tar -C $O -czf $OUT/c4.tgz .
