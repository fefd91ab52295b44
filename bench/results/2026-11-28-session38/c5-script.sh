#!/bin/bash
# Session 38 call 5 (H200, main 5cd53e6): the TMA prologue's order. Trees (one binary, QJIT_TEMPLATE_PATH): E = main
# (every ring stage's weights before the wait for the activation kernel, then their tokens); P<e> = only the first e
# stages' weights before the wait, then their tokens, then the other stages whole, in order. lqq default shapes at
# M = 32..256 (the table's kernels), forward and GEMM alone, interleaved twice; stamps of P2 at 4096x4096 M = 64.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
T0=$(date +%s)
O=/tmp/o5; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s38c5.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit qjit_cli > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
gcc -O2 -Wall -I include -I /usr/local/cuda/include $orig/.devdeps/stamps.c -o $O/stamps -L build-dev -lqjit -L /usr/local/cuda/lib64/stubs -lcuda -Wl,-rpath,$PWD/build-dev || { echo HARNESS FAILED; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
Q=$PWD/build-dev/qjit; T=$orig/.devdeps/tpl
for r in 1 2; do for t in E P0 P2 P4; do
  QJIT_CACHE_DIR=/tmp/q$t QJIT_TEMPLATE_PATH=$T/$t/templates timeout 100 $Q bench --scheme w4a8-lqq --no-peers --m 32,64,128,256 --reps 30 --csv $O/ab-$t-$r.csv > $O/ab-$t-$r.txt 2>&1
  echo "ab $t $r rc=$? at $(( $(date +%s) - T0 )) s"
done; done
grep -E "WRONG|rror" $O/ab-*.txt | head
python3 - $O <<'PY'
import csv, sys, math, collections
O = sys.argv[1]
def load(t):
    d = collections.defaultdict(lambda: [1e9, 1e9]); v = {}
    for r in (1, 2):
        try:
            for x in csv.DictReader(open(f"{O}/ab-{t}-{r}.csv")):
                if x["forced"] != "0": continue
                k = (int(x["N"]), int(x["K"]), int(x["M"]))
                d[k][0] = min(d[k][0], float(x["qjit_us"])); d[k][1] = min(d[k][1], float(x["tokens_us"]))
                v[k] = x["variant"].replace("actq=kernel;arch=sm_90a;epi=f16;g=128;kernel=gemm;", "").replace("scheme=w4a8-lqq;", "")
        except FileNotFoundError: pass
    return d, v
E, V = load("E")
for t in ("P0", "P2", "P4"):
    P, _ = load(t)
    for m in (32, 64, 128, 256):
        ks = [k for k in E if k[2] == m and k in P]
        if not ks: continue
        gf = math.exp(sum(math.log(E[k][0] / P[k][0]) for k in ks) / len(ks))
        gt = math.exp(sum(math.log(E[k][1] / P[k][1]) for k in ks) / len(ks))
        lo = min(E[k][1] / P[k][1] for k in ks)
        print(f"{t} M={m}: E/{t} forward {gf:.3f}, GEMM alone {gt:.3f} (worst {lo:.3f})")
print("per point (forward / alone, best of two), E P0 P2 P4:")
T = {t: load(t)[0] for t in ("P0", "P2", "P4")}
for k in sorted(E):
    print(f"  {k[0]:>6}x{k[1]:<6} M={k[2]:<4} " + "  ".join(f"{d[k][0]:6.2f}/{d[k][1]:6.2f}" for d in [E] + [T[t] for t in T]) + "  " + V[k])
PY
one() { QJIT_CACHE_DIR=/tmp/qP2S QJIT_TEMPLATE_PATH=$T/P2S/templates timeout 60 $O/stamps $2 $3 $4 "$5" 24 > $O/st-$1.txt 2>&1; echo "st $1 rc=$?"; }
B="pipe=tma;scheme=w4a8-lqq;wu8=1"
one m64a 4096 4096 64 "$B;tile=64x64x128;warps=1x4;stages=8;split=2;reduce=cluster"
one m128b 4096 4096 128 "$B;tile=128x64x128;warps=1x4;stages=8;split=2;reduce=cluster"
python3 $orig/.devdeps/qsan.py $O/st-*.txt > $O/stamps.txt 2>&1
awk '/ launch /{p = / launch 22:/} p' $O/stamps.txt
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c5.tgz .
