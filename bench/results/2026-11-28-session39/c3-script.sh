#!/bin/bash
# Session 39 call 3 (branch wip-token-mcast at cb6f6cd): the small-M kernels' K tiles come at the consumers' pace
# (call 2's stamps: 400 ns a tile while thread 0 refills, 240 after): 64-row tiles with a producer warpgroup, and with
# it mcast=2, against the table's kernels, 4096-wide layers at M = 16..128; the stamps of the producer kernel.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
T0=$(date +%s)
O=/tmp/o3; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s39c3.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli qjit_stamps > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
Q=$PWD/build-dev/qjit
B="pipe=tma;wu8=1"
S64="tile=64x64x128;warps=1x4;stages=8"
G1=""; for t in "$S64;split=2;reduce=cluster" "$S64;split=2" "$S64;split=4" "tile=128x64x128;warps=1x4;stages=8;split=2;reduce=cluster"; do
  G1="$G1 --variant $B;$t --variant $B;$t;producer=wg"; done
G2=""; for t in "$S64;split=2;producer=wg" "$S64;split=4;producer=wg" "$S64;split=2;reduce=cluster;producer=wg" "$S64;producer=wg"; do
  G2="$G2 --variant $B;$t;mcast=2"; done
G2="$G2 --variant $B;$S64;producer=wg --variant $B;$S64 --variant $B;tile=64x64x128;warps=1x4;stages=4;split=2;reduce=cluster;producer=wg"
for r in 1 2; do
  for g in 1 2; do
    eval V=\$G$g
    QJIT_CACHE_DIR=/tmp/qm timeout 200 $Q bench --scheme w4a8-lqq --no-peers --shapes 4096x4096,4096x11008,12288x4096,8192x8192 --m 16,32,64,128 --reps 30 $V \
      --csv $O/g$g-$r.csv > $O/g$g-$r.txt 2>&1
    echo "g$g $r rc=$? at $(( $(date +%s) - T0 )) s"
  done
done
grep -E "WRONG|rror|more than" $O/g*.txt | head
python3 - $O <<'PY'
import csv, sys, collections, glob
O = sys.argv[1]
d = collections.defaultdict(list); table = {}
for f in sorted(glob.glob(O + "/g*.csv")):
    for x in csv.DictReader(open(f)):
        k = (int(x["N"]), int(x["K"]), int(x["M"]))
        v = x["variant"].replace("actq=kernel;arch=sm_90a;epi=f16;g=128;kernel=gemm;", "").replace("scheme=w4a8-lqq;", "").replace("pipe=tma;", "").replace(";wu8=1", "")
        if x["forced"] == "0": table[k] = (float(x["tokens_us"]), v); continue
        d[k + (v,)].append(float(x["tokens_us"]))
for k in sorted(table):
    print(f"{k[0]}x{k[1]} M={k[2]}  table {table[k][0]:.2f} {table[k][1]}")
    rows = sorted((min(d[kk]), kk[3]) for kk in d if kk[:3] == k)
    for t, v in rows[:6]: print(f"   {t:6.2f} {table[k][0] / t:5.2f}x  {v}")
PY
TS=/tmp/tpl-st; python3 bench/stamps/instrument.py templates $TS/templates
QJIT_CACHE_DIR=/tmp/qst QJIT_TEMPLATE_PATH=$TS/templates timeout 60 build-dev/qjit_stamps 4096 4096 64 "$B;$S64;split=2;reduce=cluster;producer=wg" 24 > $O/st-m64p.txt 2>&1; echo "st rc=$?"
python3 bench/stamps/phases.py $O/st-m64p.txt | awk '/ launch /{p = / launch 22:/} p'
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c3.tgz .
