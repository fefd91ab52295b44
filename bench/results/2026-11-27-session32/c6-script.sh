#!/bin/bash
# Session 32 call 6: a persistent kernel's output tiles stored by the tensor memory accelerator (ymap, not waited
# for: the MMA warpgroups go on to the next tile while the stores drain). Prediction: the ~4-6 us a tile of fixed
# cost (tables: time against K at fixed N, M) is mostly all CTAs' epilogue stores draining at once; hidden, the
# persistent kernels gain 5-10 % at M >= 1024 on K = 4096 layers, less on longer K.
# (1) exactness: persistent pipes (pipes_a/pipes_b persist=1), sk lanes (lqq), bias and bf16 persistent pipes,
# llama through the table; (2) A/B against the previous commit (base tree, own build) at M = 1024, 4096.
orig=$PWD; rm -rf /tmp/src /tmp/base && mkdir -p /tmp/src /tmp/base && tar -C /tmp/src -xzf .devdeps/tree.tgz && tar -C /tmp/base -xzf .devdeps/base.tgz || exit 1
T0=$(date +%s)
O=/tmp/o6; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s32c6.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
for t in src base; do (cd /tmp/$t && cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build-$t.txt 2>&1) || { echo BUILD $t FAILED; tail $O/build-$t.txt; exit 1; }; done
echo "built $(( $(date +%s) - T0 )) s"
cd /tmp/src
run_lane() {  # name case pipes schemes
  (cd build-dev && QJIT_TEST_PIPES="$3" QJIT_TEST_SCHEMES="$4" QJIT_CACHE_DIR=/tmp/qt-$1 CK_RUN_CASE=$2 CK_DEFAULT_TIMEOUT=600 timeout 190 ./test_gpu > $O/gpu-$1.txt 2>&1; echo "rc=$?" >> $O/gpu-$1.txt) &
}
run_lane pa-1 pipes_a "persist=1" "w4a8-lqq,w4a8-qoq"
run_lane pa-2 pipes_a "persist=1" "w4a8-is,w8a8,w4a4"
run_lane pb-1 pipes_b "persist=1" "w4a8-lqq"
run_lane pb-2 pipes_b "persist=1" "w4a8-qoq"
run_lane pb-3 pipes_b "persist=1" "w4a8-is,w8a8,w4a4"
run_lane sk64 sk "sk=1;band=3" "w4a8-lqq,w8a8"
run_lane sk256 sk "warps=1x8;stages=4;pipe=tma;producer=wg;persist=1;sk=1" "w4a8-lqq,w4a4"
run_lane skx sk "sk=1;excp=1" "w4a8-lqq"
run_lane bias bias "persist=1" ""
run_lane bf16 bf16 "persist=1" "w4a8-lqq,w8a8"
run_lane llama llama "" "w4a8-lqq,w8a8"
wait
for f in $O/gpu-*.txt; do echo "== $(basename $f): $(grep -E 'Checks' $f) $(tail -1 $f) exact $(grep -c 'acc exact' $f) refused $(grep -c 'refused' $f)"; grep -E ":F:|:E:" $f | head -3 | cut -c1-300; done
echo "tests done at $(( $(date +%s) - T0 )) s"
for t in base src; do
  for s in w4a8-lqq w8a8; do
    QJIT_CACHE_DIR=/tmp/qb-$t timeout 80 /tmp/$t/build-dev/qjit bench --scheme $s --no-peers --m 1024,4096 --reps 10 --csv $O/ab-$t-$s.csv > $O/ab-$t-$s.txt 2>&1
    echo "bench $t $s rc=$? at $(( $(date +%s) - T0 )) s"
  done
done
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
    for M in ("1024", "4096"):
        ks = [k for k in rows if k[2] == M and len(rows[k]) == 2]
        if not ks: continue
        g = math.exp(sum(math.log(rows[k]["base"][0] / rows[k]["src"][0]) for k in ks) / len(ks))
        print(f"{s} M={M}: GEMM alone base/new geomean {g:.3f} over {len(ks)}: " + " ".join(f"{k[0]}x{k[1]} {rows[k]['base'][0]:.1f}->{rows[k]['src'][0]:.1f}" for k in sorted(ks)))
PY
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c6.tgz .
