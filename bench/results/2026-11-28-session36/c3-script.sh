#!/bin/bash
# Session 36 call 3: where the fixed cost of the 128x128 split-2 cluster kernel goes (4096-wide layers, M = 256):
# globaltimer stamps per CTA from an instrumented copy of the templates (printf at the end: ptxas serializes the
# wgmmas for it, so the main loop's own span is inflated; the other spans are what they are).
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
T0=$(date +%s)
O=/tmp/o3; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s36c3.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
Q=$PWD/build-dev/qjit
K="pipe=tma;tile=128x128x128;warps=1x8;producer=wg;wu8=1;stages=6;split=2;reduce=cluster"
for pt in "4096x4096 256" "4096x1024 256" "4096x4096 128"; do
  set -- $pt; s=${1%%x*}-${1##*x}-$2
  QJIT_CACHE_DIR=/tmp/qi QJIT_TEMPLATE_PATH=$orig/.devdeps/instr/templates timeout 60 $Q bench --scheme w4a8-lqq --no-peers --shapes $1 --m $2 --reps 5 --variant "$K" > $O/i$s.txt 2>&1
  QJIT_CACHE_DIR=/tmp/qn timeout 60 $Q bench --scheme w4a8-lqq --no-peers --shapes $1 --m $2 --reps 10 --variant "$K" > $O/n$s.txt 2>&1
  grep -E "^w4a8" $O/n$s.txt $O/i$s.txt | sed 's/^/  /'
  python3 - $O/i$s.txt <<'PY'
import sys, statistics as st
L=[l.split() for l in open(sys.argv[1]) if l.startswith('QS ')]
groups=[]; cur=[]; seen=set()
for x in L:
    k=tuple(x[1:5])
    if k in seen: groups.append(cur); cur=[]; seen=set()
    seen.add(k); cur.append(x)
if cur: groups.append(cur)
print(f"  {len(groups)} launches; last 3:")
for g in groups[-3:]:
    t=[[int(v) for v in x[6:13]] for x in g]
    t0=min(r[0] for r in t); end=max(r[6] for r in t)
    def q(vals): vals=sorted(vals); return f"med {vals[len(vals)//2]/1000:.2f} max {vals[-1]/1000:.2f}"
    print(f"  CTAs*2={len(g)} span {(end-t0)/1000:.2f} us | start ramp {q([r[0]-t0 for r in t])} | entry->setup {q([r[1]-r[0] for r in t])} | setup->first data {q([r[2]-r[1] for r in t])} | loop {q([r[3]-r[2] for r in t])} | drain {q([r[4]-r[3] for r in t])} | split-k {q([r[5]-r[4] for r in t])} | epilogue {q([r[6]-r[5] for r in t])} | first data abs {q([r[2]-t0 for r in t])} | end abs {q([r[6]-t0 for r in t])}")
PY
done
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c3.tgz .
