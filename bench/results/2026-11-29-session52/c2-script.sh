#!/bin/bash
# Session 52 call 2 (issue 14): the few-token sparse tiles past 8192 rows with the residual's blocks in a ring of
# their own (rpieces) instead of a room in every stage. Session 51 (c5 grid) left the sparse layers at M <= 32
# past 8192 rows the furthest over dense: at M <= 16 the dense layer now runs the TMA 16x64 tile at 8 stages (three
# CTAs an SM) where the sparse twin keeps 6 (the room: 8 stages would be two an SM; 12288x4096 M = 16 +13 % at
# rho 0.1); at M = 32 the dense TMA 32x64 tile at split 2 and 6 stages runs four an SM, its sparse room twin two
# (so the table took split 1 at 8 stages: 10240x8192 +35 %). With a ring of 16 or 32 pieces (checked on the CPU,
# qjit gen): 16x64 at 8 stages three an SM; 32x64 at split 2 and 6 stages three an SM (one wave for 10240x8192's
# 320 CTAs and 12288x4096's 384).
# Prediction: M <= 16 over dense +3..6 % where it is +5..13 %; M = 32 10240x8192 +35 -> ~+12 %, the others
# 0.9-1.0 of the table's split-1 tile. If the ring's copies wait on earlier tiles (session 43 on the 64-row
# room tiles: 2-16 points worse), the 32-piece ring is the one to read.
# Setup: cp bench/results/2026-11-29-session51/next-s52c2.sh .devdeps/s52c2.sh
T0=$(date +%s)
O=$OUT/c2; mkdir -p $O; cp .devdeps/s52c2.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli > /tmp/build.txt 2>&1) || { echo BUILD FAILED; tail /tmp/build.txt; exit 1; }
Q=$PWD/build-dev/qjit
SH=11008x4096,12288x4096,14336x4096,22016x4096,28672x4096,10240x8192,16384x8192,57344x8192
T16="pipe=tma;tile=16x64x128;warps=1x4;stages=8;split=2;reduce=cluster;producer=wg;wu8=1"
T32="pipe=tma;tile=32x64x128;warps=1x4;stages=6;split=2;reduce=cluster;producer=wg;wu8=1"
# (the dense rows refuse a ring key: their forced rows are skipped with an error line, the table's run)
QJIT_CACHE_DIR=/tmp/qS timeout 230 $Q bench --scheme w4a8-lqq --sparsity 0.05,0.1 --no-peers --shapes $SH --m 1,8,16 --reps 10 \
  --variant "$T16;rpieces=16" --variant "$T16;rpieces=32" --csv $O/m16.csv > $O/m16.txt 2>&1
echo "m16 rc=$? at $(( $(date +%s) - T0 )) s"; grep -iE "mismatch|not exact" $O/m16.txt | head -3
QJIT_CACHE_DIR=/tmp/qS timeout 150 $Q bench --scheme w4a8-lqq --sparsity 0.05,0.1 --no-peers --shapes $SH --m 32 --reps 10 \
  --variant "$T32;rpieces=16" --variant "$T32;rpieces=32" --csv $O/m32.csv > $O/m32.txt 2>&1
echo "m32 rc=$? at $(( $(date +%s) - T0 )) s"; grep -iE "mismatch|not exact" $O/m32.txt | head -3
python3 - $O <<'P' | tee $O/summary.txt
import csv, sys, re, collections
for f in ('m16', 'm32'):
    d = collections.defaultdict(dict)
    for r in csv.DictReader(open(f'{sys.argv[1]}/{f}.csv')):
        v = r['variant']; rp = re.search(r'rpieces=(\d+)', v)
        tag = 'table' if r['forced'] == '0' else 'ring%s' % (rp.group(1) if rp else '?')
        d[(int(r['N']), int(r['K']), int(r['M']))][(float(r['sparsity']), tag)] = float(r['tokens_us'])
    print('==', f, ': us, and over the dense table in brackets')
    for k in sorted(d):
        dense = d[k].get((0.0, 'table'))
        row = ' '.join('%s/%s %.2f (%+.1f%%)' % (s, t, u, 100 * (u / dense - 1)) for (s, t), u in sorted(d[k].items()) if s > 0)
        print(k, 'dense %.2f' % dense if dense else '', row)
P
echo "done at $(( $(date +%s) - T0 )) s"
