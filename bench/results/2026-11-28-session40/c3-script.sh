#!/bin/bash
# Session 40 call 3: + a K tile whose warpgroup rows carry no residual runs the dense steps (one test a tile,
# not one a step), and unsigned weights (wu8) with a residual (one add). (1) GPU lanes: sparse on the warpgroup
# pipes, sparse_llama; memcheck. (2) Latency over dense, old templates (7bcb6a6) vs new: lqq rho 0.01/0.05/0.1.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
T0=$(date +%s)
O=/tmp/o3; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s40c3.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
run_lane() {  # name case pipes timeout
  (cd build-dev && QJIT_TEST_PIPES="$3" QJIT_CACHE_DIR=/tmp/qt-$1 CK_RUN_CASE=$2 CK_DEFAULT_TIMEOUT=600 timeout $4 ./test_gpu > $O/gpu-$1.txt 2>&1; echo "rc=$?" >> $O/gpu-$1.txt) &
}
run_lane sp sparse "pipe=tma,pipe=wgmma" 200
run_lane spl sparse_llama "" 200
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
(cd build-dev && QJIT_TEST_PIPES="tile=64x64x128;warps=1x4;stages=8;split=2;pipe=tma;reduce=cluster;producer=wg,tile=128x64x128;warps=1x4;stages=6;pipe=tma;producer=wg;persist=1,tile=64x128x128;warps=1x8;stages=4;split=3;pipe=wgmma;wu8=1" \
   QJIT_CACHE_DIR=/tmp/qs CK_RUN_CASE=sparse CK_DEFAULT_TIMEOUT=600 timeout 200 $SAN --tool memcheck --error-exitcode 9 ./test_gpu > $O/san-memcheck.txt 2>&1
  echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $O/san-memcheck.txt | sort | uniq -c | tr '\n' ' ') checks: $(grep -E 'Checks' $O/san-memcheck.txt)" > $O/san.txt) &
wait
cat $O/san.txt
for f in $O/gpu-*.txt; do echo "== $(basename $f): $(grep -E 'Checks' $f) $(tail -1 $f) exact $(grep -c 'acc exact' $f)"; grep -E ":F:|:E:|WRONG|mismatch" $f | head -3 | cut -c1-300; done
echo "tests done at $(( $(date +%s) - T0 )) s"
Q=$PWD/build-dev/qjit
SH=4096x4096,12288x4096,4096x11008,8192x8192
for t in N; do
  TPL=$orig/.devdeps/tpl/O/templates; [ $t = N ] && TPL=$PWD/templates
  QJIT_CACHE_DIR=/tmp/qab$t QJIT_TEMPLATE_PATH=$TPL timeout 160 $Q bench --scheme w4a8-lqq --sparsity 0.01,0.05,0.1 --no-peers --shapes $SH --m 16,48,64,128,256,1024 --reps 20 --csv $O/sp-$t.csv > $O/sp-$t.txt 2>&1
  echo "sp $t rc=$? at $(( $(date +%s) - T0 )) s"
done
grep -E "WRONG|rror" $O/sp-*.txt | head
python3 - $O <<'PY'
import csv, sys, math, collections
O = sys.argv[1]
def load(t):
    d = {}; v = {}
    try:
        for x in csv.DictReader(open(f"{O}/sp-{t}.csv")):
            if x["forced"] != "0": continue
            k = (int(x["N"]), int(x["K"]), int(x["M"]), float(x["sparsity"]))
            d[k] = (float(x["qjit_us"]), float(x["tokens_us"] or 0)); v[k] = x["variant"].replace("actq=kernel;arch=sm_90a;epi=f16;g=128;kernel=gemm;", "").replace(";scheme=w4a8-lqq", "")
    except FileNotFoundError: pass
    return d, v
R = {t: load(t) for t in "NO"}
for t in "ON":
    d, v = R[t]
    for rho in (0.01, 0.05, 0.1):
        ks = [k for k in d if k[3] == rho and (k[0], k[1], k[2], 0.0) in d]
        if not ks: continue
        over = [d[k][1] / d[(k[0], k[1], k[2], 0.0)][1] for k in ks]
        g = math.exp(sum(map(math.log, over)) / len(over))
        print(f"tree {t} rho={rho}: {len(ks)} points, GEMM alone over dense geomean {100*(g-1):+.1f}%, worst {100*(max(over)-1):+.1f}%, over 10%: {sum(o > 1.1 for o in over)}")
        for m in sorted({k[2] for k in ks}):
            o = [d[k][1] / d[(k[0], k[1], k[2], 0.0)][1] for k in ks if k[2] == m]
            print(f"    M={m}: {100*(math.exp(sum(map(math.log, o)) / len(o))-1):+.1f}%  ({' '.join(f'{100*(x-1):+.0f}' for x in o)})")
dN, vN = R["N"]; dO, vO = R["O"]
print("per point, rho 0.1 (GEMM alone us: dense | sparse old -> new; new kernel)")
for k in sorted(k for k in dN if k[3] == 0.1):
    dk = (k[0], k[1], k[2], 0.0)
    print(f"  {k[0]}x{k[1]} M={k[2]}: {dN[dk][1]:7.2f} | {dO.get(k, (0, 0))[1]:7.2f} -> {dN[k][1]:7.2f}  {vN[k]}")
PY
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c3.tgz .
