#!/bin/bash
# Session 37 call 2 (main 0ba3fd1): (1) a K sweep on whole waves (4224xK, M = 4096: 33 x 16 = 4 x 132 tiles of
# 128x256) for the persistent 128x256 kernel against cuBLAS: the per-tile fixed cost; (2) template trees timed by the
# same binary (QJIT_TEMPLATE_PATH): E (main), H1 (no row-sum load at a tile's start), H2 (no conversion in the
# epilogue: the stores of the raw sums' xor), H3 (both) -- timing only, wrong outputs; (3) sk slices four to a word
# (S) against E, interleaved; (4) the table, lqq and w8a8, M = 16..4096, with the cuBLAS peers.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
T0=$(date +%s)
O=/tmp/o2; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s37c2.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
Q=$PWD/build-dev/qjit; TP=$orig/.devdeps/tpl
P="pipe=tma;tile=128x256x128;warps=1x8;stages=4;split=1;producer=wg;persist=1;wu8=1"
QJIT_CACHE_DIR=/tmp/qk timeout 90 $Q bench --scheme w4a8-lqq --shapes 4224x1024,4224x2048,4224x4096,4224x8192,4224x16384 --m 4096 --reps 10 \
   --variant "$P" --csv $O/ksweep.csv > $O/ksweep.txt 2>&1; echo "ksweep rc=$? at $(( $(date +%s) - T0 )) s"
grep -E "^w4a8" $O/ksweep.txt
for r in 1 2; do for t in E H1 H2 H3; do
  QJIT_CACHE_DIR=/tmp/qh$t QJIT_TEMPLATE_PATH=$TP/$t/templates timeout 60 $Q bench --scheme w4a8-lqq --no-peers --shapes 4224x4096,12288x4096,22016x4096,8192x8192 --m 4096 --reps 10 \
     --variant "$P" --csv $O/h-$t-$r.csv > $O/h-$t-$r.txt 2>&1; echo "h $t $r rc=$? at $(( $(date +%s) - T0 )) s"
done; done
for r in 1 2; do for t in E S; do
  for s in w4a8-lqq w8a8; do
  QJIT_CACHE_DIR=/tmp/qs$t QJIT_TEMPLATE_PATH=$TP/$t/templates timeout 60 $Q bench --scheme $s --no-peers --shapes 57344x8192,8192x28672,12288x4096,10240x8192 --m 512,4096 --reps 10 \
     --csv $O/s-$t-$s-$r.csv > $O/s-$t-$s-$r.txt 2>&1; echo "s $t $s $r rc=$? at $(( $(date +%s) - T0 )) s"
  done
done; done
python3 - $O <<'PY'
import csv, sys, glob, os, statistics as st
O = sys.argv[1]
def load(f):
    d = {}
    for r in csv.DictReader(open(f)):
        d[(r["scheme"], r["N"], r["K"], r["M"], r["forced"])] = float(r["tokens_us"])
    return d
print("H trees (GEMM alone us, runs 1 / 2; forced = the persistent 128x256 non-sk):")
H = {t: [load(f"{O}/h-{t}-{r}.csv") for r in (1, 2) if os.path.exists(f"{O}/h-{t}-{r}.csv")] for t in ("E", "H1", "H2", "H3")}
for k in sorted(H["E"][0]):
    print("  " + " ".join(k[1:]) + ": " + "  ".join(f"{t} " + "/".join(f"{d.get(k, 0):.1f}" for d in H[t]) for t in H))
print("sk four to a word (S) against E, GEMM alone us, runs 1 / 2:")
for s in ("w4a8-lqq", "w8a8"):
    S = {t: [load(f"{O}/s-{t}-{s}-{r}.csv") for r in (1, 2) if os.path.exists(f"{O}/s-{t}-{s}-{r}.csv")] for t in ("E", "S")}
    for k in sorted(S["E"][0]):
        e = [d[k] for d in S["E"] if k in d]; v = [d[k] for d in S["S"] if k in d]
        print(f"  {s} " + " ".join(k[1:4]) + f": E {'/'.join(f'{x:.1f}' for x in e)}  S {'/'.join(f'{x:.1f}' for x in v)}  E/S {min(e)/min(v):.3f}")
PY
echo "experiments done at $(( $(date +%s) - T0 )) s"
left=$(( 585 - ($(date +%s) - T0) ))
QJIT_CACHE_DIR=/tmp/qt timeout $left $Q bench --scheme w4a8-lqq,w8a8 --m 16,64,128,256,512,1024,4096 --reps 10 --csv $O/table.csv --json $O/table.json > $O/table.txt 2>&1
echo "table rc=$?"
sed -n '/^summary/,$p' $O/table.txt | head -40
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c2.tgz .
