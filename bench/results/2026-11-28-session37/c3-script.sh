#!/bin/bash
# Session 37 call 3: persistent wu8 kernels fetch the next piece's token row sums into L1 as a tile starts
# (prefetch.global.L1, a line a thread). (1) exactness lanes: pipes filtered to persist=1 (every scheme), BF16 and
# bias persist=1, sk, llama through the table; memcheck on two wu8 persistent kernels; (2) A/B of the templates,
# same binary (QJIT_TEMPLATE_PATH): E (0ba3fd1) against P (this tree), lqq M = 256..4096, interleaved, twice.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
T0=$(date +%s)
O=/tmp/o3; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s37c3.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
run_lane() {  # name case pipes
  (cd build-dev && QJIT_TEST_PIPES="$3" QJIT_CACHE_DIR=/tmp/qt-$1 CK_RUN_CASE=$2 CK_DEFAULT_TIMEOUT=600 timeout 150 ./test_gpu > $O/gpu-$1.txt 2>&1; echo "rc=$?" >> $O/gpu-$1.txt) &
}
C="persist=1"
run_lane pa pipes_a $C; run_lane pb pipes_b $C; run_lane bf16 bf16 $C; run_lane bias bias $C; run_lane sk sk ""; run_lane llama llama ""
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
V1="pipe=tma;tile=128x256x128;warps=1x8;stages=4;split=1;producer=wg;persist=1;sk=1;wu8=1"
V2="pipe=tma;tile=64x64x128;warps=1x4;stages=8;producer=wg;persist=1;band=3;wu8=1"
(QJIT_CACHE_DIR=/tmp/qs timeout 150 $SAN --tool memcheck --error-exitcode 9 build-dev/qjit bench --scheme w4a8-lqq --shapes 1024x1024 --m 300 --reps 5 --no-peers \
      --variant "$V1" --variant "$V2" > $O/san-memcheck.txt 2>&1
  echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $O/san-memcheck.txt | head -3 | tr '\n' ' ')" > $O/san.txt) &
wait
cat $O/san.txt
for f in $O/gpu-*.txt; do echo "== $(basename $f): $(grep -E 'Checks' $f) $(tail -1 $f) exact $(grep -c 'acc exact' $f) refused $(grep -c 'refused' $f)"; grep -E ":F:|:E:|WRONG|mismatch" $f | head -3 | cut -c1-300; done
echo "tests done at $(( $(date +%s) - T0 )) s"
Q=$PWD/build-dev/qjit
for r in 1 2; do for t in E P; do
  TPL=$orig/.devdeps/tpl/E/templates; [ $t = P ] && TPL=$PWD/templates
  QJIT_CACHE_DIR=/tmp/qb$t QJIT_TEMPLATE_PATH=$TPL timeout 80 $Q bench --scheme w4a8-lqq --no-peers --m 256,512,1024,4096 --reps 10 --csv $O/ab-$t-$r.csv > $O/ab-$t-$r.txt 2>&1
  echo "bench $t $r rc=$? at $(( $(date +%s) - T0 )) s"
done; done
python3 - $O <<'PY'
import csv, sys, math, os
O = sys.argv[1]
def load(f):
    d = {}
    if os.path.exists(f):
        for r in csv.DictReader(open(f)):
            if r["forced"] == "0": d[(r["N"], r["K"], r["M"])] = (float(r["tokens_us"]), float(r["qjit_us"]), r["variant"])
    return d
E = [load(f"{O}/ab-E-{r}.csv") for r in (1, 2)]; P = [load(f"{O}/ab-P-{r}.csv") for r in (1, 2)]
for M in ("256", "512", "1024", "4096"):
    ks = [k for k in E[0] if k[2] == M and all(k in d for d in E + P)]
    if not ks: continue
    g = math.exp(sum(math.log(min(d[k][0] for d in E) / min(d[k][0] for d in P)) for k in ks) / len(ks))
    f = math.exp(sum(math.log(min(d[k][1] for d in E) / min(d[k][1] for d in P)) for k in ks) / len(ks))
    print(f"M={M}: E/P geomean alone {g:.3f}, forward {f:.3f} over {len(ks)} (best of two runs each)")
    for k in sorted(ks, key=lambda k: (int(k[0]), int(k[1]))):
        v = E[0][k][2]; tag = "persist" if "persist=1" in v else "-"
        print(f"   {k[0]}x{k[1]} {tag:7s} E {'/'.join(f'{d[k][0]:.2f}' for d in E)}  P {'/'.join(f'{d[k][0]:.2f}' for d in P)}")
PY
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c3.tgz .
