#!/bin/bash
# Session 36 call 4: the cluster split-K's fix-up and the ring's first stage. (1) globaltimer stamps per CTA
# (instrumented template copies: HEAD, S = every peer load in flight at once, SR = S + the producer's first stage
# whole before the others), 4096x4096 M = 256; (2) event-timed A/B of the three template trees (same binary,
# QJIT_TEMPLATE_PATH), lqq, 8 shapes, M = 64 / 128 / 256, GEMM alone and forward.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
T0=$(date +%s)
O=/tmp/o4; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s36c4.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
Q=$PWD/build-dev/qjit; TP=$orig/.devdeps/tpl
K="pipe=tma;tile=128x128x128;warps=1x8;producer=wg;wu8=1;stages=6;split=2;reduce=cluster"
for t in ibase iS iSR; do
  QJIT_CACHE_DIR=/tmp/q$t QJIT_TEMPLATE_PATH=$TP/$t/templates timeout 60 $Q bench --scheme w4a8-lqq --no-peers --shapes 4096x4096 --m 256 --reps 5 --variant "$K" > $O/$t.txt 2>&1
  echo "== $t rc=$?"
  python3 - $O/$t.txt <<'PY'
import sys
L=[l.split() for l in open(sys.argv[1]) if l.startswith('QS ')]
groups=[]; cur=[]; seen=set()
for x in L:
    k=tuple(x[1:5])
    if k in seen: groups.append(cur); cur=[]; seen=set()
    seen.add(k); cur.append(x)
if cur: groups.append(cur)
def q(vals): vals=sorted(vals); return f"{vals[len(vals)//2]/1000:.2f}/{vals[-1]/1000:.2f}"
print(f"  {len(groups)} launches; last 3 (median/max us):")
for g in groups[-3:]:
    t=[[int(v) for v in x[6:16]] for x in g]
    t0=min(r[0] for r in t); end=max(r[6] for r in t)
    print(f"  span {(end-t0)/1000:.2f} | ramp {q([r[0]-t0 for r in t])} | setup {q([r[1]-r[0] for r in t])} | first data {q([r[2]-r[1] for r in t])} (abs {q([r[2]-t0 for r in t])}) | loop {q([r[3]-r[2] for r in t])} | drain {q([r[4]-r[3] for r in t])} | sts {q([r[7]-r[4] for r in t])} | cl.sync {q([r[8]-r[7] for r in t])} | loads+adds {q([r[9]-r[8] for r in t])} | arrive {q([r[5]-r[9] for r in t])} | epilogue {q([r[6]-r[5] for r in t])} | loop end abs {q([r[3]-t0 for r in t])}")
PY
done
echo "instr done at $(( $(date +%s) - T0 )) s"
for t in base S SR; do
  QJIT_CACHE_DIR=/tmp/q$t QJIT_TEMPLATE_PATH=$TP/$t/templates timeout 100 $Q bench --scheme w4a8-lqq --no-peers --m 64,128,256 --reps 10 --csv $O/ab-$t.csv > $O/ab-$t.txt 2>&1
  echo "bench $t rc=$? at $(( $(date +%s) - T0 )) s"
done
python3 - $O <<'PY'
import csv, sys, math
O = sys.argv[1]
rows = {}
for t in ("base", "S", "SR"):
    for r in csv.DictReader(open(f"{O}/ab-{t}.csv")):
        if r["forced"] == "0":
            rows.setdefault((r["N"], r["K"], r["M"]), {})[t] = (float(r["tokens_us"]), float(r["qjit_us"]), r["variant"])
for M in sorted({k[2] for k in rows}, key=int):
    ks = [k for k in rows if k[2] == M and len(rows[k]) == 3]
    for t in ("S", "SR"):
        g = math.exp(sum(math.log(rows[k]["base"][0] / rows[k][t][0]) for k in ks) / len(ks))
        f = math.exp(sum(math.log(rows[k]["base"][1] / rows[k][t][1]) for k in ks) / len(ks))
        print(f"M={M} {t}: base/{t} geomean alone {g:.3f}, forward {f:.3f}")
    for k in sorted(ks, key=lambda k: (int(k[0]), int(k[1]))):
        v = rows[k]["base"][2]; v = ';'.join(x for x in v.split(';') if x.split('=')[0] in ('tile','split','reduce','persist','pipe'))
        print(f"   {k[0]}x{k[1]}: alone " + " / ".join(f"{rows[k][t][0]:.2f}" for t in ("base","S","SR")) + "   forward " + " / ".join(f"{rows[k][t][1]:.2f}" for t in ("base","S","SR")) + f"   {v}")
PY
echo "seconds: $(( $(date +%s) - T0 ))"
for t in ibase iS iSR; do grep -v "^QS " $O/$t.txt > $O/$t.log; rm $O/$t.txt; done
tar -C $O -czf $OUT/c4.tgz .
