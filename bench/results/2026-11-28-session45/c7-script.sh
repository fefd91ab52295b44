#!/bin/bash
# Session 45 call 7 (issue 14): kslice (split-K slices by work, main) against even slices (tree K) in qjit bench,
# whose sparse layers keep calibration-weighted blocks (crowded into the outlier channels' k-blocks, where
# kslice was made for). Call 6 (random blocks, stamps) measured even slices 0.984 (0.958-0.996 on split points).
# Prediction: even slices win at rho 0.05 (-1..-2 points of the geomean over dense); at 0.1 a wash or a small
# loss where the residual crowds (the 4096-row layers at M <= 64).
T0=$(date +%s)
O=/tmp/o7; rm -rf $O; mkdir -p $O
cp .devdeps/s45c7.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
Q=$PWD/build-dev/qjit
for t in new old new2 old2; do
  TP=$PWD/.devdeps/tpl/K/templates; case $t in old*) TP=$PWD/templates;; esac
  QJIT_TEMPLATE_PATH=$TP QJIT_CACHE_DIR=/tmp/qC-${t%2} timeout 110 $Q bench --scheme w4a8-lqq --sparsity 0.05,0.1 --no-peers --shapes 4096x4096,12288x4096,4096x11008,8192x8192 --m 16,32,64,128,256,1024 --reps 10 --csv $O/bench-$t.csv > $O/bench-$t.txt 2>&1
  echo "bench $t rc=$? at $(( $(date +%s) - T0 )) s"
done
python3 - $O <<'PY'
import csv, sys, math, os
def rd(t):
    p = f"{sys.argv[1]}/bench-{t}.csv"
    return {(int(x["N"]), int(x["K"]), int(x["M"]), float(x["sparsity"])): (float(x["tokens_us"]), x["variant"]) for x in csv.DictReader(open(p))} if os.path.exists(p) else {}
R = {t: rd(t) for t in ("old", "new", "old2", "new2")}
g = lambda v: math.exp(sum(map(math.log, v)) / len(v))
for t in ("old", "new"):
    a, b = R[t], R[t + "2"]
    for rho in (0.05, 0.1):
        o = []
        for k in a:
            if k[3] != rho or k not in b: continue
            d = (k[0], k[1], k[2], 0.0)
            s = min(a[k][0], b[k][0]); dd = min(a[d][0], b[d][0])
            o.append((k, s / dd))
        print(f"{t} rho={rho}: {len(o)} points geomean {100*(g([x[1] for x in o])-1):+.1f}%, worst {100*(max(x[1] for x in o)-1):+.1f}%")
        print("   ", " ".join(f"{k[0]}x{k[1]}/{k[2]} {100*(v-1):+.1f}" for k, v in sorted(o)))
for rho in (0.05, 0.1):
    r = [min(R["new"][k][0], R["new2"][k][0]) / min(R["old"][k][0], R["old2"][k][0]) for k in R["old"] if k[3] == rho and k in R["new"] and k in R["old2"] and k in R["new2"]]
    print(f"sparse new/old rho={rho}: geomean {g(r):.3f} over {len(r)}, min {min(r):.3f} max {max(r):.3f}")
PY
echo "done at $(( $(date +%s) - T0 )) s"
tar -C $O -czf $OUT/c7.tgz .
