#!/bin/bash
# Session 39 call 4 (main + the dispatch change, uncommitted tree): 64-row TMA tiles with a producer warpgroup at
# M = 33..128 (narrow(64) for every N, narrow(128) for N <= 4096). (1) GPU lanes filtered to producer=wg, llama;
# memcheck on the new kernels; (2) A/B of the table, old templates (e655e19) vs new, one binary, two interleaved
# rounds: w4a8-lqq on 16 shapes (8 default, 8 other) at M = 48 / 64 / 96 / 128; the other schemes on 4 shapes.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
T0=$(date +%s)
O=/tmp/o4; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s39c4.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
run_lane() {  # name case pipes
  (cd build-dev && QJIT_TEST_PIPES="$3" QJIT_CACHE_DIR=/tmp/qt-$1 CK_RUN_CASE=$2 CK_DEFAULT_TIMEOUT=600 timeout 110 ./test_gpu > $O/gpu-$1.txt 2>&1; echo "rc=$?" >> $O/gpu-$1.txt) &
}
F="producer=wg"
run_lane pa pipes_a $F; run_lane pb pipes_b $F; run_lane bias bias $F; run_lane w4ax w4ax $F; run_lane llama llama ""; run_lane bf16 bf16 $F
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
V1="pipe=tma;tile=64x64x128;warps=1x4;stages=8;split=2;reduce=cluster;producer=wg;wu8=1"
V2="pipe=tma;tile=64x64x128;warps=1x4;stages=8;split=1;producer=wg;wu8=1"
V3="pipe=tma;tile=128x64x128;warps=1x4;stages=8;split=2;reduce=cluster;producer=wg;wu8=1"
(QJIT_CACHE_DIR=/tmp/qs timeout 110 $SAN --tool memcheck --error-exitcode 9 build-dev/qjit bench --scheme w4a8-lqq --shapes 320x1024 --m 100 --reps 5 --no-peers \
      --variant "$V1" --variant "$V2" --variant "$V3" > $O/san-memcheck.txt 2>&1
  echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $O/san-memcheck.txt | head -3 | tr '\n' ' ')" > $O/san.txt) &
wait
cat $O/san.txt
for f in $O/gpu-*.txt; do echo "== $(basename $f): $(grep -E 'Checks' $f) $(tail -1 $f) exact $(grep -c 'acc exact' $f)"; grep -E ":F:|:E:|WRONG|mismatch" $f | head -3 | cut -c1-300; done
echo "tests done at $(( $(date +%s) - T0 )) s"
Q=$PWD/build-dev/qjit
SH=12288x4096,4096x4096,22016x4096,4096x11008,10240x8192,8192x8192,57344x8192,8192x28672,6144x4096,14336x4096,4096x14336,3584x3584,18944x3584,3584x18944,5120x5120,13824x5120
for r in 1 2; do for t in O N; do
  TPL=$orig/.devdeps/tpl/O/templates; [ $t = N ] && TPL=$PWD/templates
  QJIT_CACHE_DIR=/tmp/qab$t QJIT_TEMPLATE_PATH=$TPL timeout 150 $Q bench --scheme w4a8-lqq --no-peers --shapes $SH --m 48,64,96,128 --reps 30 --csv $O/ab-$t-lqq-$r.csv > $O/ab-$t-lqq-$r.txt 2>&1
  echo "ab $t lqq $r rc=$? at $(( $(date +%s) - T0 )) s"
done; done
for t in O N; do
  TPL=$orig/.devdeps/tpl/O/templates; [ $t = N ] && TPL=$PWD/templates
  QJIT_CACHE_DIR=/tmp/qab$t QJIT_TEMPLATE_PATH=$TPL timeout 150 $Q bench --scheme w4a8-qoq,w4a8-is,w8a8,w4a4 --no-peers --shapes 4096x4096,4096x11008,12288x4096,8192x8192 --m 64,128 --reps 30 --csv $O/ab-$t-oth-1.csv > $O/ab-$t-oth-1.txt 2>&1
  echo "ab $t oth rc=$? at $(( $(date +%s) - T0 )) s"
done
grep -E "WRONG|rror" $O/ab-*.txt | head
python3 - $O <<'PY'
import csv, sys, math, collections, glob
O = sys.argv[1]
def load(t):
    d = collections.defaultdict(lambda: [1e9, 1e9]); v = {}
    for f in glob.glob(f"{O}/ab-{t}-*.csv"):
        for x in csv.DictReader(open(f)):
            if x["forced"] != "0": continue
            k = (x["scheme"], int(x["N"]), int(x["K"]), int(x["M"]))
            d[k][0] = min(d[k][0], float(x["qjit_us"])); d[k][1] = min(d[k][1], float(x["tokens_us"]))
            v[k] = x["variant"].replace("actq=kernel;arch=sm_90a;epi=f16;kernel=gemm;", "")
    return d, v
Od, Ov = load("O"); Nd, Nv = load("N")
for s in sorted({k[0] for k in Od}):
    for m in sorted({k[3] for k in Od if k[0] == s}):
        ks = [k for k in Od if k[0] == s and k[3] == m and k in Nd]
        ch = [k for k in ks if Ov[k] != Nv[k]]
        if not ch: print(f"{s} M={m}: no kernel changed ({len(ks)} layers)"); continue
        gf = math.exp(sum(math.log(Od[k][0] / Nd[k][0]) for k in ch) / len(ch))
        gt = math.exp(sum(math.log(Od[k][1] / Nd[k][1]) for k in ch) / len(ch))
        print(f"{s} M={m}: {len(ch)}/{len(ks)} layers changed: forward {gf:.3f}x, GEMM alone {gt:.3f}x (min {min(Od[k][1] / Nd[k][1] for k in ch):.3f})")
        for k in sorted(ch, key=lambda k: Od[k][1] / Nd[k][1])[:40]:
            r = Od[k][1] / Nd[k][1]
            print(f"    {k[1]}x{k[2]}: {Od[k][1]:7.2f} -> {Nd[k][1]:7.2f} ({r:.3f}x)  fwd {Od[k][0]:7.2f} -> {Nd[k][0]:7.2f}   {Nv[k].replace(';scheme=' + s, '')}")
PY
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c4.tgz .
