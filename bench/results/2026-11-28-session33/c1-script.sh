#!/bin/bash
# Session 33 call 1: the warpgroup-MMA epilogue with stmatrix (4 blocks of 8x8 16-bit values per store, transposed,
# two values per conversion) and its loads made before the drain (36 loads a thread, not one per value).
# (1) exactness: wgmma/tma forced pipes (pipes_a, pipes_b) of every scheme, sk, bias, bf16, w4ax, llama;
# (2) A/B against d2f04aa (base tree, own build), GEMM alone.
orig=$PWD; rm -rf /tmp/src /tmp/base && mkdir -p /tmp/src /tmp/base && tar -C /tmp/src -xzf .devdeps/tree.tgz && tar -C /tmp/base -xzf .devdeps/base.tgz || exit 1
T0=$(date +%s)
O=/tmp/o1; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s33c1.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
for t in src base; do (cd /tmp/$t && cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build-$t.txt 2>&1) || { echo BUILD $t FAILED; tail $O/build-$t.txt; exit 1; }; done
echo "built $(( $(date +%s) - T0 )) s"
cd /tmp/src
W="pipe=wgmma,pipe=tma"
run_lane() {  # name case pipes schemes
  (cd build-dev && QJIT_TEST_PIPES="$3" QJIT_TEST_SCHEMES="$4" QJIT_CACHE_DIR=/tmp/qt-$1 CK_RUN_CASE=$2 CK_DEFAULT_TIMEOUT=600 timeout 185 ./test_gpu > $O/gpu-$1.txt 2>&1; echo "rc=$?" >> $O/gpu-$1.txt) &
}
run_lane pa-l pipes_a "$W" "w4a8-lqq"
run_lane pa-q pipes_a "$W" "w4a8-qoq"
run_lane pa-x pipes_a "$W" "w4a8-is,w8a8,w4a4"
run_lane pb-l pipes_b "$W" "w4a8-lqq"
run_lane pb-q pipes_b "$W" "w4a8-qoq"
run_lane pb-x pipes_b "$W" "w4a8-is,w8a8,w4a4"
run_lane sk sk "" "w4a8-lqq,w8a8"
run_lane bias bias "$W" ""
run_lane bf16 bf16 "$W" "w4a8-lqq,w8a8"
run_lane w4ax w4ax "$W" ""
run_lane llama llama "" "w4a8-lqq,w8a8,w4a8-is"
wait
for f in $O/gpu-*.txt; do echo "== $(basename $f): $(grep -E 'Checks' $f) $(tail -1 $f) exact $(grep -c 'acc exact' $f) refused $(grep -c 'refused' $f) skipped $(grep -c 'not run' $f)"; grep -E ":F:|:E:" $f | head -3 | cut -c1-300; done
echo "tests done at $(( $(date +%s) - T0 )) s"
ab() { # scheme Ms
  for t in base src; do
    QJIT_CACHE_DIR=/tmp/qb-$t timeout 100 /tmp/$t/build-dev/qjit bench --scheme $1 --no-peers --m $2 --reps 10 --csv $O/ab-$t-$1.csv > $O/ab-$t-$1.txt 2>&1
    echo "bench $t $1 rc=$? at $(( $(date +%s) - T0 )) s"
  done
}
ab w4a8-lqq 128,256,512,1024,4096
ab w8a8 256,4096
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
tar -C $O -czf $OUT/c1.tgz .
