#!/bin/bash
# Session 38 call 7 (H200, branch exp-epi-early-all): the epilogue's loads before the main loop in warpgroup-MMA
# kernels without a producer where the registers allow (the plan's p.epi_early). (1) exactness lanes: pipes filtered to
# the touched tiles (warps=1x4, pipe=wgmma, 64x128 on two warpgroups) for every scheme, BF16, bias, w4ax, llama
# through the table; memcheck on two touched kernels; (2) A/B of the templates, one binary (QJIT_TEMPLATE_PATH):
# E (main 5cd53e6) against N (this tree), lqq and w8a8 at M = 32 / 64 / 128, forward and GEMM alone, interleaved twice.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
T0=$(date +%s)
O=/tmp/o7; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s38c7.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
run_lane() {  # name case pipes
  (cd build-dev && QJIT_TEST_PIPES="$3" QJIT_CACHE_DIR=/tmp/qt-$1 CK_RUN_CASE=$2 CK_DEFAULT_TIMEOUT=600 timeout 110 ./test_gpu > $O/gpu-$1.txt 2>&1; echo "rc=$?" >> $O/gpu-$1.txt) &
}
F="warps=1x4,pipe=wgmma,tile=64x128x128;warps=1x8"
run_lane pa pipes_a $F; run_lane pb pipes_b $F; run_lane bias bias $F; run_lane w4ax w4ax $F; run_lane llama llama ""; run_lane bf16 bf16 $F
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
V1="pipe=tma;tile=64x64x128;warps=1x4;stages=8;split=2;reduce=cluster;wu8=1"
V2="pipe=wgmma;tile=32x64x128;warps=1x4;stages=8;split=2;reduce=cluster;wu8=1"
V3="pipe=tma;tile=128x64x128;warps=1x4;stages=8;split=2;wu8=1"
(QJIT_CACHE_DIR=/tmp/qs timeout 110 $SAN --tool memcheck --error-exitcode 9 build-dev/qjit bench --scheme w4a8-lqq --shapes 1024x1024 --m 100 --reps 5 --no-peers \
      --variant "$V1" --variant "$V2" --variant "$V3" > $O/san-memcheck.txt 2>&1
  echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $O/san-memcheck.txt | head -3 | tr '\n' ' ')" > $O/san.txt) &
wait
cat $O/san.txt
for f in $O/gpu-*.txt; do echo "== $(basename $f): $(grep -E 'Checks' $f) $(tail -1 $f) exact $(grep -c 'acc exact' $f)"; grep -E ":F:|:E:|WRONG|mismatch" $f | head -3 | cut -c1-300; done
echo "tests done at $(( $(date +%s) - T0 )) s"
Q=$PWD/build-dev/qjit
for r in 1 2; do for t in E N; do for s in w4a8-lqq w8a8; do
  TPL=$orig/.devdeps/tpl/E/templates; [ $t = N ] && TPL=$PWD/templates
  QJIT_CACHE_DIR=/tmp/qab$t QJIT_TEMPLATE_PATH=$TPL timeout 80 $Q bench --scheme $s --no-peers --m 32,64,128 --reps 30 --csv $O/ab-$t-$s-$r.csv > $O/ab-$t-$s-$r.txt 2>&1
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
    E, V = load("E", s); N, _ = load("N", s)
    for m in (32, 64, 128):
        ks = [k for k in E if k[2] == m and k in N]
        t = [k for k in ks if ("pipe=tma" in V[k] or "pipe=wgmma" in V[k]) and "producer=wg" not in V[k]]
        for name, sel in (("all", ks), ("touched", t)):
            if not sel: continue
            gf = math.exp(sum(math.log(E[k][0] / N[k][0]) for k in sel) / len(sel))
            gt = math.exp(sum(math.log(E[k][1] / N[k][1]) for k in sel) / len(sel))
            lo = min(E[k][1] / N[k][1] for k in sel); hi = max(E[k][1] / N[k][1] for k in sel)
            print(f"{s} M={m} {name} ({len(sel)}): E/N forward {gf:.3f}, GEMM alone {gt:.3f} ({lo:.3f} .. {hi:.3f})")
    for k in sorted(E):
        if k in N: print(f"  {s} {k[0]:>6}x{k[1]:<6} M={k[2]:<4} E {E[k][0]:7.2f}/{E[k][1]:7.2f}  N {N[k][0]:7.2f}/{N[k][1]:7.2f}  {E[k][1]/N[k][1]:.3f}  {V[k]}")
PY
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c7.tgz .
