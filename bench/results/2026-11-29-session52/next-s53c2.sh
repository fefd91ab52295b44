#!/bin/bash
# Session 53 call 2 (issue 12): the split-K fix-ups of session 52 (1c2a0b7: partials four registers to a 16-byte
# store and load, the global fix-up's slices one at a time; 18c4022: the producer's first token copies rolled)
# against the templates before them (8cdfa45, in .devdeps/tpl/O: refresh with
# `rm -rf .devdeps/tpl/O && mkdir -p .devdeps/tpl/O && git archive 8cdfa45 templates | tar -x -C .devdeps/tpl/O`),
# on the table's kernels where they run: the persistent stream-K tiles (M >= 256) and the split-K tiles with
# partials in the workspace (IS at M = 128..256), two runs each side, alternating.
# Prediction: 0.99-1.01 everywhere (the fix-up runs once a tile; the same bytes, a quarter of the instructions).
# Setup: cp bench/results/2026-11-29-session52/next-s53c2.sh .devdeps/s53c2.sh
T0=$(date +%s)
O=$OUT/c2; mkdir -p $O; cp .devdeps/s53c2.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli > /tmp/build.txt 2>&1) || { echo BUILD FAILED; tail /tmp/build.txt; exit 1; }
Q=$PWD/build-dev/qjit
ab() {  # NAME TEMPLATES
  QJIT_TEMPLATE_PATH=$2 QJIT_CACHE_DIR=/tmp/qAB-$1 timeout 110 $Q bench --scheme w4a8-lqq,w4a8-is --no-peers \
    --shapes 4096x4096,22016x4096,10240x8192,8192x28672 --m 128,256,1024,4096 --reps 10 --csv $O/ab-$1-$3.csv > $O/ab-$1-$3.txt 2>&1
  echo "$1 run $3 rc=$? at $(( $(date +%s) - T0 )) s"; grep -iE "wrong|mismatch" $O/ab-$1-$3.txt | head -3
}
for r in 1 2; do ab old $PWD/.devdeps/tpl/O/templates $r; ab new $PWD/templates $r; done
python3 - $O <<'P' | tee $O/summary.txt
import csv, sys, glob, math, collections
best = collections.defaultdict(dict)
for side in ('old', 'new'):
    for f in glob.glob(f'{sys.argv[1]}/ab-{side}-*.csv'):
        for r in csv.DictReader(open(f)):
            k = (r['scheme'], int(r['N']), int(r['K']), int(r['M']))
            u = float(r['tokens_us'])
            if u > 0: best[k][side] = min(best[k].get(side, 1e9), u)
rat = []
for k in sorted(best):
    if len(best[k]) == 2:
        x = best[k]['new'] / best[k]['old']; rat.append(x)
        print(k, 'old %.2f new %.2f  %.3f' % (best[k]['old'], best[k]['new'], x))
if rat: print('new/old geomean %.4f over %d points, min %.3f max %.3f' % (math.exp(sum(map(math.log, rat)) / len(rat)), len(rat), min(rat), max(rat)))
P
echo "done at $(( $(date +%s) - T0 )) s"
