#!/bin/bash
# Session 35 call 4: the dispatch changes (ragged last wave -> persistent 128x128 at M = 129..512 on K <= 4096;
# w8a8 at M = 33..64 split by the one-wave rule). (1) the llama lanes through the new table (lqq, w8a8);
# (2) A/B against 9117659, GEMM alone and forward, lqq at M = 256 / 512, w8a8 at M = 64 / 128 (every point
# bit-exact first); (3) the full table with the cuBLAS peers, lqq and w8a8, M = 16..4096.
orig=$PWD; rm -rf /tmp/src /tmp/base && mkdir -p /tmp/src /tmp/base && tar -C /tmp/src -xzf .devdeps/tree.tgz && tar -C /tmp/base -xzf .devdeps/base.tgz || exit 1
T0=$(date +%s)
O=/tmp/o4; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s35c4.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
for t in src base; do (cd /tmp/$t && cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build-$t.txt 2>&1) || { echo BUILD $t FAILED; tail $O/build-$t.txt; exit 1; }; done
echo "built $(( $(date +%s) - T0 )) s"
cd /tmp/src
run_lane() {  # name case pipes schemes
  (cd build-dev && QJIT_TEST_PIPES="$3" QJIT_TEST_SCHEMES="$4" QJIT_CACHE_DIR=/tmp/qt-$1 CK_RUN_CASE=$2 CK_DEFAULT_TIMEOUT=600 timeout 120 ./test_gpu > $O/gpu-$1.txt 2>&1; echo "rc=$?" >> $O/gpu-$1.txt) &
}
run_lane llama-l llama "" w4a8-lqq
run_lane llama-w llama "" w8a8
wait
for f in $O/gpu-*.txt; do echo "== $(basename $f): $(grep -E 'Checks' $f) $(tail -1 $f) exact $(grep -c 'acc exact' $f) skipped $(grep -c 'not run' $f)"; grep -E ":F:|:E:" $f | head -3 | cut -c1-300; done
echo "tests done at $(( $(date +%s) - T0 )) s"
for t in base src; do
  for s in "w4a8-lqq 256,512" "w8a8 64,128"; do set -- $s
    QJIT_CACHE_DIR=/tmp/qb-$t timeout 100 /tmp/$t/build-dev/qjit bench --scheme $1 --no-peers --m $2 --reps 10 --csv $O/ab-$t-$1.csv > $O/ab-$t-$1.txt 2>&1
    echo "bench $t $1 rc=$? at $(( $(date +%s) - T0 )) s"
  done
done
python3 - $O <<'PY'
import csv, sys, math
O = sys.argv[1]
for sch in ("w4a8-lqq", "w8a8"):
    rows = {}
    for t in ("base", "src"):
        try:
            for r in csv.DictReader(open(f"{O}/ab-{t}-{sch}.csv")):
                if r["forced"] == "0":
                    rows.setdefault((r["N"], r["K"], r["M"]), {})[t] = (float(r["tokens_us"]), float(r["qjit_us"]), r["variant"])
        except OSError:
            pass
    for M in sorted({k[2] for k in rows}, key=int):
        ks = [k for k in rows if k[2] == M and len(rows[k]) == 2]
        if not ks: continue
        g = math.exp(sum(math.log(rows[k]["base"][0] / rows[k]["src"][0]) for k in ks) / len(ks))
        f = math.exp(sum(math.log(rows[k]["base"][1] / rows[k]["src"][1]) for k in ks) / len(ks))
        print(f"{sch} M={M}: base/new geomean GEMM alone {g:.3f}, forward {f:.3f} over {len(ks)}: " + " ".join(f"{k[0]}x{k[1]} {rows[k]['base'][0]:.1f}->{rows[k]['src'][0]:.1f}{'*' if rows[k]['base'][2] != rows[k]['src'][2] else ''}" for k in sorted(ks)))
PY
QJIT_CACHE_DIR=/tmp/qb-src timeout $(( 590 - ($(date +%s) - T0) )) build-dev/qjit bench --scheme w4a8-lqq,w8a8 --m 16,64,128,256,512,1024,4096 --reps 10 --csv $O/table.csv --json $O/table.json > $O/table.txt 2>&1
echo "table rc=$?"
sed -n '/^summary/,$p' $O/table.txt | head -40
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c4.tgz .
