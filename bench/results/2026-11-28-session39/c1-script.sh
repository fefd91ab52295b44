#!/bin/bash
# Session 39 call 1 (prepared in session 38; branch wip-token-mcast): mcast=2 (pairs of CTAs sharing token tiles)
# on the GPU for the first time. (1) exactness: pipes_a / pipes_b filtered to mcast=2 (every scheme; 320 rows =
# five 64-row tiles: the last pair's second CTA is past N), memcheck + racecheck + synccheck on two mcast kernels;
# (2) forced variants, GEMM alone, with and without mcast, 4096x4096 / 4096x11008 / 12288x4096 at M = 64 / 128;
# (3) stamps of the mcast 64x64 kernel at 4096x4096 M = 64.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
T0=$(date +%s)
O=/tmp/o1; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s39c1.sh $O/script.sh
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
  QJIT_CACHE_DIR=/tmp/qs timeout 100 $SAN --tool $tool --error-exitcode 9 build-dev/qjit bench --scheme w4a8-lqq --shapes 320x1024 --m 100 --reps 5 --no-peers \
      --variant "$V1" --variant "$V2" --variant "$V3" > $O/san-$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $O/san-$tool.txt | head -3 | tr '\n' ' ')" | tee -a $O/san.txt
done
wait
for f in $O/gpu-*.txt; do echo "== $(basename $f): $(grep -E 'Checks' $f) $(tail -1 $f) exact $(grep -c 'acc exact' $f)"; grep -E ":F:|:E:|WRONG|mismatch" $f | head -3 | cut -c1-300; done
echo "tests done at $(( $(date +%s) - T0 )) s"
Q=$PWD/build-dev/qjit
B="pipe=tma;wu8=1"
for r in 1 2; do
QJIT_CACHE_DIR=/tmp/qm timeout 120 $Q bench --scheme w4a8-lqq --no-peers --shapes 4096x4096,4096x11008,12288x4096 --m 64,128 --reps 30 \
  --variant "$B;tile=64x64x128;warps=1x4;stages=8;split=2;reduce=cluster" --variant "$B;tile=64x64x128;warps=1x4;stages=8;split=2;reduce=cluster;mcast=2" \
  --variant "$B;tile=128x64x128;warps=1x4;stages=8;split=2;reduce=cluster" --variant "$B;tile=128x64x128;warps=1x4;stages=8;split=2;reduce=cluster;mcast=2" \
  --variant "$B;tile=64x128x128;warps=1x8;stages=4;split=2;reduce=cluster" --variant "$B;tile=64x128x128;warps=1x8;stages=4;split=2;reduce=cluster;mcast=2" \
  --variant "$B;tile=64x64x128;warps=1x4;stages=8;split=4" --variant "$B;tile=64x64x128;warps=1x4;stages=8;split=4;mcast=2" \
  --csv $O/mc-$r.csv > $O/mc-$r.txt 2>&1
echo "mc $r rc=$? at $(( $(date +%s) - T0 )) s"
QJIT_CACHE_DIR=/tmp/qm timeout 120 $Q bench --scheme w4a8-lqq --no-peers --shapes 4096x4096,4096x11008,12288x4096,8192x8192 --m 128,256 --reps 30 \
  --variant "$B;tile=128x128x128;warps=1x8;stages=6;split=2;reduce=cluster;producer=wg" --variant "$B;tile=128x128x128;warps=1x8;stages=6;split=2;reduce=cluster;producer=wg;mcast=2" \
  --variant "$B;tile=128x128x128;warps=1x8;stages=6;producer=wg" --variant "$B;tile=128x128x128;warps=1x8;stages=6;producer=wg;mcast=2" \
  --csv $O/mp-$r.csv > $O/mp-$r.txt 2>&1
echo "mp $r rc=$? at $(( $(date +%s) - T0 )) s"
done
grep -E "WRONG|rror" $O/mc-*.txt | head
python3 - $O <<'PY'
import csv, sys, collections
O = sys.argv[1]
d = collections.defaultdict(list)
for r in ("mc-1", "mc-2", "mp-1", "mp-2"):
    for x in csv.DictReader(open(f"{O}/{r}.csv")):
        v = ("TABLE " if x["forced"] == "0" else "") + x["variant"].replace("actq=kernel;arch=sm_90a;epi=f16;g=128;kernel=gemm;", "").replace("scheme=w4a8-lqq;", "")
        d[(int(x["N"]), int(x["K"]), int(x["M"]), v)].append(float(x["tokens_us"]))
last = None
for k in sorted(d):
    if k[:3] != last: print(f"{k[0]}x{k[1]} M={k[2]}"); last = k[:3]
    print(f"   {min(d[k]):7.2f}  {k[3]}")
PY
TS=/tmp/tpl-st; python3 bench/stamps/instrument.py templates $TS/templates
QJIT_CACHE_DIR=/tmp/qst QJIT_TEMPLATE_PATH=$TS/templates timeout 60 build-dev/qjit_stamps 4096 4096 64 "$B;tile=64x64x128;warps=1x4;stages=8;split=2;reduce=cluster;mcast=2" 24 > $O/st-m64mc.txt 2>&1; echo "st rc=$?"
python3 bench/stamps/phases.py $O/st-m64mc.txt | awk '/ launch /{p = / launch 22:/} p'
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c1.tgz .
