#!/bin/bash
# Session 38 call 6 (H200, main 5cd53e6): K rotation. Trees (one binary, QJIT_TEMPLATE_PATH): E = main; R = the
# non-persistent dense TMA kernels walk their K slice from tile blockIdx.x % ktiles; RH = from blockIdx.x * ktiles /
# gridDim.x (spread evenly). The CTAs sharing a token tile then read different K tiles at once. lqq and w8a8
# default shapes, M = 64..512, forward and GEMM alone, interleaved twice (bench checks each point bit-exact first);
# stamps of R at 4096x4096 M = 64 / 128.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
T0=$(date +%s)
O=/tmp/o6; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s38c6.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit qjit_cli > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
gcc -O2 -Wall -I include -I /usr/local/cuda/include $orig/.devdeps/stamps.c -o $O/stamps -L build-dev -lqjit -L /usr/local/cuda/lib64/stubs -lcuda -Wl,-rpath,$PWD/build-dev || { echo HARNESS FAILED; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
Q=$PWD/build-dev/qjit; T=$orig/.devdeps/tpl
B="pipe=tma;scheme=w4a8-lqq;wu8=1"
one() { QJIT_CACHE_DIR=/tmp/qRS QJIT_TEMPLATE_PATH=$T/RS/templates timeout 60 $O/stamps $2 $3 $4 "$5" 24 > $O/st-$1.txt 2>&1; echo "st $1 rc=$?"; }
one m64a 4096 4096 64 "$B;tile=64x64x128;warps=1x4;stages=8;split=2;reduce=cluster"
one m128b 4096 4096 128 "$B;tile=128x64x128;warps=1x4;stages=8;split=2;reduce=cluster"
python3 $orig/.devdeps/qsan.py $O/st-*.txt > $O/stamps.txt 2>&1
awk '/ launch /{p = / launch 22:/} p' $O/stamps.txt | grep -v "gap tile"
for r in 1 2; do for t in E R RH; do for s in w4a8-lqq w8a8; do
  QJIT_CACHE_DIR=/tmp/q$t QJIT_TEMPLATE_PATH=$T/$t/templates timeout 80 $Q bench --scheme $s --no-peers --m 64,128,256,512 --reps 30 --csv $O/ab-$t-$s-$r.csv > $O/ab-$t-$s-$r.txt 2>&1
  echo "ab $t $s $r rc=$? at $(( $(date +%s) - T0 )) s"
done; done; done
grep -E "WRONG|rror" $O/ab-*.txt | head
python3 - $O <<'PY'
import csv, sys, math, collections
O = sys.argv[1]
def load(t, s):
    d = collections.defaultdict(lambda: [1e9, 1e9]); v = {}
    for r in (1, 2):
        try:
            for x in csv.DictReader(open(f"{O}/ab-{t}-{s}-{r}.csv")):
                if x["forced"] != "0": continue
                k = (int(x["N"]), int(x["K"]), int(x["M"]))
                d[k][0] = min(d[k][0], float(x["qjit_us"])); d[k][1] = min(d[k][1], float(x["tokens_us"]))
                v[k] = x["variant"].replace("actq=kernel;arch=sm_90a;epi=f16;kernel=gemm;", "")
        except FileNotFoundError: pass
    return d, v
for s in ("w4a8-lqq", "w8a8"):
    E, V = load("E", s)
    T = {t: load(t, s)[0] for t in ("R", "RH")}
    for t in T:
        for m in (64, 128, 256, 512):
            ks = [k for k in E if k[2] == m and k in T[t] and "persist=1" not in V[k] and "pipe=tma" in V[k]]
            if not ks: continue
            gf = math.exp(sum(math.log(E[k][0] / T[t][k][0]) for k in ks) / len(ks))
            gt = math.exp(sum(math.log(E[k][1] / T[t][k][1]) for k in ks) / len(ks))
            lo = min(E[k][1] / T[t][k][1] for k in ks); hi = max(E[k][1] / T[t][k][1] for k in ks)
            print(f"{s} {t} M={m} ({len(ks)} TMA non-persistent points): E/{t} forward {gf:.3f}, GEMM alone {gt:.3f} ({lo:.3f} .. {hi:.3f})")
    print(f"{s} per point (forward / alone, best of two), E R RH:")
    for k in sorted(E):
        print(f"  {k[0]:>6}x{k[1]:<6} M={k[2]:<4} " + "  ".join(f"{d[k][0]:7.2f}/{d[k][1]:7.2f}" for d in [E, T["R"], T["RH"]]) + "  " + V[k])
PY
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c6.tgz .
