#!/bin/bash
# Session 39 call 2 (branch wip-token-mcast at cb6f6cd): mcast=2 after call 1's finding (the remote release's
# cluster-scoped fence, MEMBAR.ALL.GPU per warp per K tile, halved the speed): the same checks, a wider A/B. (1) exactness: pipes_a / pipes_b filtered to mcast=2 (every scheme; 320 rows =
# five 64-row tiles: the last pair's second CTA is past N), memcheck + racecheck + synccheck on two mcast kernels;
# (2) forced variants, GEMM alone, with and without mcast, 4096x4096 / 4096x11008 / 12288x4096 at M = 64 / 128;
# (3) stamps of the mcast 64x64 kernel at 4096x4096 M = 64.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
T0=$(date +%s)
O=/tmp/o2; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s39c2.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu qjit_stamps > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
run_lane() {  # name case pipes
  (cd build-dev && QJIT_TEST_PIPES="$3" QJIT_CACHE_DIR=/tmp/qt-$1 CK_RUN_CASE=$2 CK_DEFAULT_TIMEOUT=600 timeout 100 ./test_gpu > $O/gpu-$1.txt 2>&1; echo "rc=$?" >> $O/gpu-$1.txt) &
}
run_lane pa pipes_a "mcast=2"; run_lane pb pipes_b "mcast=2"
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
V1="pipe=tma;tile=64x64x128;warps=1x4;stages=8;split=2;reduce=cluster;mcast=2;wu8=1"
V2="pipe=tma;tile=64x64x128;warps=1x4;stages=8;split=2;mcast=2;wu8=1"
V3="pipe=tma;tile=128x128x128;warps=1x8;stages=6;split=2;reduce=cluster;producer=wg;mcast=2;wu8=1"
for tool in memcheck racecheck synccheck; do
  R=5; [ $tool = racecheck ] && R=1
  QJIT_CACHE_DIR=/tmp/qs timeout 150 $SAN --tool $tool --error-exitcode 9 build-dev/qjit bench --scheme w4a8-lqq --shapes 320x1024 --m 100 --reps $R --no-peers \
      --variant "$V1" --variant "$V2" --variant "$V3" > $O/san-$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $O/san-$tool.txt | head -3 | tr '\n' ' ')" | tee -a $O/san.txt
done
wait
for f in $O/gpu-*.txt; do echo "== $(basename $f): $(grep -E 'Checks' $f) $(tail -1 $f) exact $(grep -c 'acc exact' $f)"; grep -E ":F:|:E:|WRONG|mismatch" $f | head -3 | cut -c1-300; done
echo "tests done at $(( $(date +%s) - T0 )) s"
Q=$PWD/build-dev/qjit
B="pipe=tma;wu8=1"
V=""
for t in "64x64x128;warps=1x4;stages=8;split=2;reduce=cluster" "64x64x128;warps=1x4;stages=8;split=2" "64x64x128;warps=1x4;stages=8;split=4" \
         "64x128x128;warps=1x8;stages=4;split=2;reduce=cluster" "64x128x128;warps=1x8;stages=4" "128x64x128;warps=1x4;stages=8;split=2;reduce=cluster" \
         "64x64x128;warps=1x4;stages=8"; do
  V="$V --variant $B;tile=$t --variant $B;tile=$t;mcast=2"
done
P=""
for t in "128x128x128;warps=1x8;stages=6;split=2;reduce=cluster;producer=wg" "128x128x128;warps=1x8;stages=6;producer=wg" "128x64x128;warps=1x4;stages=8;producer=wg"; do
  P="$P --variant $B;tile=$t --variant $B;tile=$t;mcast=2"
done
for r in 1 2; do
QJIT_CACHE_DIR=/tmp/qm timeout 150 $Q bench --scheme w4a8-lqq --no-peers --shapes 4096x4096,4096x11008,12288x4096,11008x4096 --m 16,64,128 --reps 30 $V \
  --csv $O/mc-$r.csv > $O/mc-$r.txt 2>&1
echo "mc $r rc=$? at $(( $(date +%s) - T0 )) s"
QJIT_CACHE_DIR=/tmp/qm timeout 120 $Q bench --scheme w4a8-lqq --no-peers --shapes 4096x4096,4096x11008,12288x4096,8192x8192 --m 128,256 --reps 30 $P \
  --csv $O/mp-$r.csv > $O/mp-$r.txt 2>&1
echo "mp $r rc=$? at $(( $(date +%s) - T0 )) s"
done
grep -E "WRONG|rror" $O/mc-*.txt | head
python3 - $O <<'PY'
import csv, sys, collections
O = sys.argv[1]
d = collections.defaultdict(list); table = {}
for r in ("mc-1", "mc-2", "mp-1", "mp-2"):
    for x in csv.DictReader(open(f"{O}/{r}.csv")):
        k = (int(x["N"]), int(x["K"]), int(x["M"]))
        v = x["variant"].replace("actq=kernel;arch=sm_90a;epi=f16;g=128;kernel=gemm;", "").replace("scheme=w4a8-lqq;", "").replace("pipe=tma;", "").replace(";wu8=1", "")
        if x["forced"] == "0": table[k] = (float(x["tokens_us"]), v); continue
        d[k + (v,)].append(float(x["tokens_us"]))
for k in sorted(table):
    rows = []
    for kk in sorted(d):
        if kk[:3] != k or "mcast=2" in kk[3]: continue
        v = kk[3]; mc = [x for x in d if x[:3] == k and x[3] == "mcast=2;" + v]
        t0 = min(d[kk]); t1 = min(d[mc[0]]) if mc else float("nan")
        rows.append(f"   {t0:6.2f} {t1:6.2f} {t0 / t1:5.2f}x  {v}")
    print(f"{k[0]}x{k[1]} M={k[2]}  table {table[k][0]:.2f} {table[k][1]}")
    print("\n".join(rows))
PY
TS=/tmp/tpl-st; python3 bench/stamps/instrument.py templates $TS/templates
QJIT_CACHE_DIR=/tmp/qst QJIT_TEMPLATE_PATH=$TS/templates timeout 60 build-dev/qjit_stamps 4096 4096 64 "$B;tile=64x64x128;warps=1x4;stages=8;split=2;reduce=cluster;mcast=2" 24 > $O/st-m64mc.txt 2>&1; echo "st rc=$?"
python3 bench/stamps/phases.py $O/st-m64mc.txt | awk '/ launch /{p = / launch 22:/} p'
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c2.tgz .
