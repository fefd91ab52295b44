#!/bin/bash
# Session 35 call 5: (1) lqq lanes that call 2 left at their deadline (sk, odd, bf16) run on longer, beside the
# persistent forced pipes (pipes_b) and w8a8's llama lane through the new table; (2) A/B against a7e8950: w8a8 at
# M = 128 with the 128x256 tile where 128x128 tiles make 1..2 waves (every point bit-exact first).
orig=$PWD; rm -rf /tmp/src /tmp/base && mkdir -p /tmp/src /tmp/base && tar -C /tmp/src -xzf .devdeps/tree.tgz && tar -C /tmp/base -xzf .devdeps/base.tgz || exit 1
T0=$(date +%s)
O=/tmp/o5; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s35c5.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
for t in src base; do (cd /tmp/$t && cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build-$t.txt 2>&1) || { echo BUILD $t FAILED; tail $O/build-$t.txt; exit 1; }; done
echo "built $(( $(date +%s) - T0 )) s"
cd /tmp/src
run_lane() {  # name case pipes schemes
  (cd build-dev && QJIT_TEST_PIPES="$3" QJIT_TEST_SCHEMES="$4" QJIT_CACHE_DIR=/tmp/qt-$1 CK_RUN_CASE=$2 CK_DEFAULT_TIMEOUT=600 timeout 230 ./test_gpu > $O/gpu-$1.txt 2>&1; echo "rc=$?" >> $O/gpu-$1.txt) &
}
run_lane sk sk "" w4a8-lqq
run_lane odd odd "" w4a8-lqq
run_lane bf16 bf16 "" w4a8-lqq
run_lane pb pipes_b "persist=1" w4a8-lqq
run_lane llama-w llama "" w8a8
wait
for f in $O/gpu-*.txt; do echo "== $(basename $f): $(grep -E 'Checks' $f) $(tail -1 $f) exact $(grep -c 'acc exact' $f) skipped $(grep -c 'not run' $f)"; grep -E ":F:|:E:" $f | head -3 | cut -c1-300; done
echo "tests done at $(( $(date +%s) - T0 )) s"
for t in base src; do
  QJIT_CACHE_DIR=/tmp/qb-$t timeout 100 /tmp/$t/build-dev/qjit bench --scheme w8a8 --no-peers --m 128 --reps 10 --csv $O/ab-$t.csv > $O/ab-$t.txt 2>&1
  echo "bench $t rc=$? at $(( $(date +%s) - T0 )) s"
done
python3 - $O <<'PY'
import csv, sys, math
O = sys.argv[1]
rows = {}
for t in ("base", "src"):
    for r in csv.DictReader(open(f"{O}/ab-{t}.csv")):
        if r["forced"] == "0":
            rows.setdefault((r["N"], r["K"], r["M"]), {})[t] = (float(r["tokens_us"]), float(r["qjit_us"]), r["variant"])
for M in sorted({k[2] for k in rows}, key=int):
    ks = [k for k in rows if k[2] == M and len(rows[k]) == 2]
    g = math.exp(sum(math.log(rows[k]["base"][0] / rows[k]["src"][0]) for k in ks) / len(ks))
    print(f"w8a8 M={M}: base/new geomean GEMM alone {g:.3f} over {len(ks)}: " + " ".join(f"{k[0]}x{k[1]} {rows[k]['base'][0]:.1f}->{rows[k]['src'][0]:.1f}{'*' if rows[k]['base'][2] != rows[k]['src'][2] else ''}" for k in sorted(ks)))
PY
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c5.tgz .
