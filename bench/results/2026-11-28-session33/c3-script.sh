#!/bin/bash
# Session 33 call 3: persistent kernels load the epilogue scales as the tile starts (layouts without row sums) and wait
# only for their last tensor stores to have read shared memory at the end (bulk_wait_read); stages=3 rows (how much the ring depth matters).
# (1) exactness: persistent forced pipes (pipes_a, pipes_b) of every scheme, sk (four schemes), bias, bf16, llama;
# (2) A/B against 6de6aff (base tree, own build), GEMM alone.
orig=$PWD; rm -rf /tmp/src /tmp/base && mkdir -p /tmp/src /tmp/base && tar -C /tmp/src -xzf .devdeps/tree.tgz && tar -C /tmp/base -xzf .devdeps/base.tgz || exit 1
T0=$(date +%s)
O=/tmp/o3; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s33c3.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
for t in src base; do (cd /tmp/$t && cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build-$t.txt 2>&1) || { echo BUILD $t FAILED; tail $O/build-$t.txt; exit 1; }; done
echo "built $(( $(date +%s) - T0 )) s"
cd /tmp/src
W="pipe=wgmma,pipe=tma"
run_lane() {  # name case pipes schemes
  (cd build-dev && QJIT_TEST_PIPES="$3" QJIT_TEST_SCHEMES="$4" QJIT_CACHE_DIR=/tmp/qt-$1 CK_RUN_CASE=$2 CK_DEFAULT_TIMEOUT=600 timeout 185 ./test_gpu > $O/gpu-$1.txt 2>&1; echo "rc=$?" >> $O/gpu-$1.txt) &
}
P="persist=1"
run_lane pa-l pipes_a "$P" "w4a8-lqq"
run_lane pa-q pipes_a "$P" "w4a8-qoq"
run_lane pa-x pipes_a "$P" "w4a8-is,w8a8,w4a4"
run_lane pb-l pipes_b "$P" "w4a8-lqq"
run_lane pb-q pipes_b "$P" "w4a8-qoq"
run_lane pb-x pipes_b "$P" "w4a8-is,w8a8,w4a4"
run_lane sk sk "" "w4a8-lqq,w8a8"
run_lane skq sk "" "w4a8-qoq,w4a4"
run_lane bias bias "$P" ""
run_lane bf16 bf16 "$P" "w4a8-lqq,w8a8"
run_lane llama llama "" "w4a8-lqq,w8a8,w4a8-qoq"
wait
for f in $O/gpu-*.txt; do echo "== $(basename $f): $(grep -E 'Checks' $f) $(tail -1 $f) exact $(grep -c 'acc exact' $f) refused $(grep -c 'refused' $f) skipped $(grep -c 'not run' $f)"; grep -E ":F:|:E:" $f | head -3 | cut -c1-300; done
echo "tests done at $(( $(date +%s) - T0 )) s"
ab() { # scheme Ms
  for t in base src; do
    QJIT_CACHE_DIR=/tmp/qb-$t timeout 100 /tmp/$t/build-dev/qjit bench --scheme $1 --no-peers --m $2 --reps 10 --csv $O/ab-$t-$1.csv > $O/ab-$t-$1.txt 2>&1
    echo "bench $t $1 rc=$? at $(( $(date +%s) - T0 )) s"
  done
}
ab w4a8-lqq 512,1024,4096
ab w8a8 1024,4096
QJIT_CACHE_DIR=/tmp/qb-src timeout 120 /tmp/src/build-dev/qjit bench --no-peers --m 1024,4096 --reps 10 --variant "tile=128x256x128;warps=1x8;stages=3;pipe=tma;producer=wg;persist=1;sk=1" --csv $O/st3.csv > $O/st3.txt 2>&1
echo "bench stages=3 rc=$? at $(( $(date +%s) - T0 )) s"; grep -A12 -i "variant" $O/st3.txt | tail -14
python3 - $O <<'PY'
import csv, sys, math
O = sys.argv[1]
for s in ("w4a8-lqq", "w8a8"):
    rows = {}
    for t in ("base", "src"):
        try:
            for r in csv.DictReader(open(f"{O}/ab-{t}-{s}.csv")):
                if r["forced"] == "0":
                    rows.setdefault((r["N"], r["K"], r["M"]), {})[t] = (float(r["tokens_us"]), float(r["qjit_us"]))
        except OSError:
            pass
    for M in sorted({k[2] for k in rows}, key=int):
        ks = [k for k in rows if k[2] == M and len(rows[k]) == 2]
        if not ks: continue
        g = math.exp(sum(math.log(rows[k]["base"][0] / rows[k]["src"][0]) for k in ks) / len(ks))
        f = math.exp(sum(math.log(rows[k]["base"][1] / rows[k]["src"][1]) for k in ks) / len(ks))
        print(f"{s} M={M}: base/new geomean GEMM alone {g:.3f}, forward {f:.3f} over {len(ks)}: " + " ".join(f"{k[0]}x{k[1]} {rows[k]['base'][0]:.1f}->{rows[k]['src'][0]:.1f}" for k in sorted(ks)))
PY
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c3.tgz .
