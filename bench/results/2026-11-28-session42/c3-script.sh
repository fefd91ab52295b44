#!/bin/bash
# Session 42 call 3 (working tree: the decode twin keeps the dense kernel's CTAs an SM at 2 stages; sparse weights at
# M <= 32 on layers up to 8192 rows take the TMA pipe's 16/32-token producer tiles at split 2 in a cluster).
# (1) Table A/B at few tokens on the 8 default shapes, tree S (this) vs M (main's templates), rho 0.05 / 0.1,
#     M = 1, 4, 16, 32, GEMM alone. Prediction (from call 2's forced rows): at M <= 32 the sparse-over-dense geomean
#     from ~+28 % to ~+12 %; the 12288/22016/10240/57344-row layers unchanged.
# (2) GPU: the sparse case on the new tiles and the decode twins (every sparse config), then the Llama-size sparse
#     layers through the table next call (sparse_llama).
T0=$(date +%s)
O=/tmp/o3; rm -rf $O; mkdir -p $O
cp .devdeps/s42c3.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
Q=$PWD/build-dev/qjit
for t in S M; do
  TPL=.devdeps/tpl/M/templates; [ $t = S ] && TPL=$PWD/templates
  QJIT_CACHE_DIR=/tmp/q$t QJIT_TEMPLATE_PATH=$TPL timeout 150 $Q bench --scheme w4a8-lqq --sparsity 0.05,0.1 --no-peers --m 1,4,16,32 --reps 20 --csv $O/few-$t.csv > $O/few-$t.txt 2>&1
  echo "few $t rc=$? at $(( $(date +%s) - T0 )) s"
done
python3 - $O <<'PY'
import csv, sys, math
O = sys.argv[1]; R = {}
for t in "SM":
    d = {}
    for x in csv.DictReader(open(f"{O}/few-{t}.csv")):
        d[(int(x["N"]), int(x["K"]), int(x["M"]), float(x["sparsity"]))] = (float(x["tokens_us"]), x["variant"])
    R[t] = d
    for rho in (0.05, 0.1):
        o = [d[k][0] / d[(k[0], k[1], k[2], 0.0)][0] for k in d if k[3] == rho and (k[0], k[1], k[2], 0.0) in d and d[k][0] > 0]
        if o: print(f"tree {t} rho={rho}: {len(o)} points over dense geomean {100*(math.exp(sum(map(math.log, o))/len(o))-1):+.1f}%, worst {100*(max(o)-1):+.1f}%")
def short(v): return ";".join(g for g in v.split(";") if g.split("=")[0] in ("pipe", "tile", "warps", "stages", "split"))
for k in sorted(R["S"]):
    if k[3] > 0:
        s, m, dn = R["S"][k], R["M"].get(k, (0, "")), R["S"][(k[0], k[1], k[2], 0.0)]
        print("  ", k, f"S {s[0]:.2f} M {m[0]:.2f} dense {dn[0]:.2f}  S/dense {100*(s[0]/dn[0]-1):+.1f}%  M/dense {100*(m[0]/dn[0]-1):+.1f}%", short(s[1]) if k[3] == 0.05 else "")
PY
(cd build-dev && QJIT_CACHE_DIR=/tmp/qt QJIT_TEST_PIPES="tile=16x64x128;warps=1x4;stages=8;split=2;pipe=tma,tile=32x64x128;warps=1x4;stages=8;split=2;pipe=tma,pipe=decode" CK_RUN_CASE=sparse CK_DEFAULT_TIMEOUT=300 timeout 150 ./test_gpu > $O/gpu-sp.txt 2>&1; echo "rc=$?" >> $O/gpu-sp.txt)
echo "== gpu-sp: $(grep -E '^[0-9]+%: Checks' $O/gpu-sp.txt) $(tail -1 $O/gpu-sp.txt) exact $(grep -c 'acc exact' $O/gpu-sp.txt) at $(( $(date +%s) - T0 )) s"; grep -E ":F:|:E:" $O/gpu-sp.txt | head -3
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c3.tgz .
