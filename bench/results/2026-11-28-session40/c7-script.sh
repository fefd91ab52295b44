#!/bin/bash
# Session 40 call 7: the residual word read a step ahead (p.rlook, tree N) against read at the tile's top (tree R,
# the same templates with p.rlook = 0), one binary: w4a8-lqq, 4 shapes, rho 0.01 / 0.1, M = 64..1024, GEMM alone.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
T0=$(date +%s)
O=/tmp/o7; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s40c7.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
Q=$PWD/build-dev/qjit
for t in R N; do
  TPL=$orig/.devdeps/tpl/R/templates; [ $t = N ] && TPL=$PWD/templates
  QJIT_CACHE_DIR=/tmp/q$t QJIT_TEMPLATE_PATH=$TPL timeout 80 $Q bench --scheme w4a8-lqq --sparsity 0.01,0.1 --no-peers --shapes 4096x4096,12288x4096,4096x11008,8192x8192 --m 64,128,256,1024 --reps 20 --csv $O/ab-$t.csv > $O/ab-$t.txt 2>&1
  echo "ab $t rc=$? at $(( $(date +%s) - T0 )) s"
done
python3 - $O <<'PY'
import csv, sys, math
O = sys.argv[1]
R = {}
for t in "RN":
    d = {}
    try:
        for x in csv.DictReader(open(f"{O}/ab-{t}.csv")):
            d[(int(x["N"]), int(x["K"]), int(x["M"]), float(x["sparsity"]))] = float(x["tokens_us"])
    except FileNotFoundError: pass
    R[t] = d
for t in "RN":
    d = R[t]
    for rho in (0.01, 0.1):
        o = [d[k] / d[(k[0], k[1], k[2], 0.0)] for k in d if k[3] == rho and (k[0], k[1], k[2], 0.0) in d]
        if o: print(f"tree {t} rho={rho}: {len(o)} points, over dense geomean {100*(math.exp(sum(map(math.log, o))/len(o))-1):+.1f}%, worst {100*(max(o)-1):+.1f}%")
ks = [k for k in R["N"] if k[3] > 0 and k in R["R"]]
if ks:
    g = math.exp(sum(math.log(R["R"][k] / R["N"][k]) for k in ks) / len(ks))
    print(f"sparse R/N (>1: the read-ahead faster) geomean {g:.3f} over {len(ks)} points")
    for k in sorted(ks): print(f"   {k}: R {R['R'][k]:.2f}  N {R['N'][k]:.2f}")
PY
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c7.tgz .
