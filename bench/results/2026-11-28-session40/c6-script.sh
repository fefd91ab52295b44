#!/bin/bash
# Session 40 call 6: + the next K tile's residual word read a step ahead (p.rlook). (1) GPU lanes: sparse on the
# TMA pipe, sparse_llama; memcheck on three sparse TMA kernels; (2) stamps, 4096x4096 / 12288x4096 M = 64, dense /
# rho 0.01; (3) the budget's latency over dense on the eight default shapes, w4a8-lqq, rho 0.05 / 0.1, M = 1..1024.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
T0=$(date +%s)
O=/tmp/o6; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s40c6.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu qjit_stamps > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
run_lane() {  # name case pipes timeout
  (cd build-dev && QJIT_TEST_PIPES="$3" QJIT_CACHE_DIR=/tmp/qt-$1 CK_RUN_CASE=$2 CK_DEFAULT_TIMEOUT=600 timeout $4 ./test_gpu > $O/gpu-$1.txt 2>&1; echo "rc=$?" >> $O/gpu-$1.txt) &
}
run_lane sp sparse "pipe=tma" 150
run_lane spl sparse_llama "" 150
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
(cd build-dev && QJIT_TEST_PIPES="tile=64x64x128;warps=1x4;stages=8;split=2;pipe=tma;reduce=cluster;producer=wg,tile=128x64x128;warps=1x4;stages=6;pipe=tma;producer=wg;persist=1,tile=64x128x128;warps=2x4;stages=5;split=2;pipe=tma;wu8=1" \
   QJIT_CACHE_DIR=/tmp/qs CK_RUN_CASE=sparse CK_DEFAULT_TIMEOUT=600 timeout 150 $SAN --tool memcheck --error-exitcode 9 ./test_gpu > $O/san-memcheck.txt 2>&1
  echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $O/san-memcheck.txt | sort | uniq -c | tr '\n' ' ') checks: $(grep -E 'Checks' $O/san-memcheck.txt)" > $O/san.txt) &
wait
cat $O/san.txt
for f in $O/gpu-*.txt; do echo "== $(basename $f): $(grep -E 'Checks' $f) $(tail -1 $f) exact $(grep -c 'acc exact' $f)"; grep -E ":F:|:E:|WRONG|mismatch" $f | head -3 | cut -c1-300; done
echo "tests done at $(( $(date +%s) - T0 )) s"
TS=/tmp/tpl-st; python3 bench/stamps/instrument.py templates $TS/templates
for c in "4096 4096 64" "12288 4096 64"; do for r in 0 0.01; do
  n=$(echo "$c $r" | tr ' ' '-')
  QJIT_CACHE_DIR=/tmp/qst QJIT_TEMPLATE_PATH=$TS/templates timeout 60 build-dev/qjit_stamps $c - 24 $r > $O/st-$n.txt 2>&1; echo "st $n rc=$?"
  python3 bench/stamps/phases.py $O/st-$n.txt | awk '/ launch /{p = / launch 22:/} p' > $O/ph-$n.txt
  grep -E "K tile 0 landed|gap tile 8->9|CTA duration" $O/ph-$n.txt
done; done
echo "stamps done at $(( $(date +%s) - T0 )) s"
Q=$PWD/build-dev/qjit
QJIT_CACHE_DIR=/tmp/qb timeout $(( 560 - ($(date +%s) - T0) )) $Q bench --scheme w4a8-lqq --sparsity 0.05,0.1 --no-peers --m 1,16,32,64,128,256,512,1024 --reps 20 --csv $O/sp8.csv > $O/sp8.txt 2>&1
echo "sp8 rc=$? at $(( $(date +%s) - T0 )) s"
grep -E "WRONG|rror" $O/sp8.txt | head -3
sed -n '/^sparsity /,/^$/p' $O/sp8.txt
python3 - $O <<'PY'
import csv, sys, math
O = sys.argv[1]
d = {}
for x in csv.DictReader(open(f"{O}/sp8.csv")):
    if x["forced"] != "0": continue
    d[(int(x["N"]), int(x["K"]), int(x["M"]), float(x["sparsity"]))] = float(x["tokens_us"])
for rho in (0.05, 0.1):
    ks = [k for k in d if k[3] == rho and (k[0], k[1], k[2], 0.0) in d]
    o = [d[k] / d[(k[0], k[1], k[2], 0.0)] for k in ks]
    if not o: continue
    print(f"rho={rho}: {len(o)} points, GEMM alone over dense geomean {100*(math.exp(sum(map(math.log, o))/len(o))-1):+.1f}%, worst {100*(max(o)-1):+.1f}%, over 10%: {sum(x > 1.1 for x in o)}")
    for m in sorted({k[2] for k in ks}):
        om = [d[k] / d[(k[0], k[1], k[2], 0.0)] for k in ks if k[2] == m]
        print(f"   M={m}: {100*(math.exp(sum(map(math.log, om))/len(om))-1):+.1f}%")
PY
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c6.tgz .
