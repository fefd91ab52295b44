#!/bin/bash
# Session 36 call 7: the st.async cluster fix-up as committed (non-producer kernels add in 16-register chunks and
# declare two CTAs an SM: __launch_bounds__(threads, 2)). (1) exactness lanes filtered to reduce=cluster (pipes
# with the new clusters of 3 and 4, every scheme), misc and llama through the tables; racecheck on a small
# cluster kernel; (2) A/B against 2d2f0d1, lqq M = 32 / 128 / 256 and w8a8 M = 64 / 128, GEMM alone and forward.
orig=$PWD; rm -rf /tmp/src /tmp/base && mkdir -p /tmp/src /tmp/base && tar -C /tmp/src -xzf .devdeps/tree.tgz && tar -C /tmp/base -xzf .devdeps/base.tgz || exit 1
T0=$(date +%s)
O=/tmp/o7; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s36c7.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cd /tmp/src && cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build-src.txt 2>&1) &
(cd /tmp/base && cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j8 --target qjit_cli > $O/build-base.txt 2>&1) &
wait
[ -x /tmp/src/build-dev/test_gpu ] && [ -x /tmp/base/build-dev/qjit ] || { echo BUILD FAILED; tail $O/build-*.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
cd /tmp/src
run_lane() {  # name case pipes
  (cd build-dev && QJIT_TEST_PIPES="$3" QJIT_CACHE_DIR=/tmp/qt-$1 CK_RUN_CASE=$2 CK_DEFAULT_TIMEOUT=600 timeout 140 ./test_gpu > $O/gpu-$1.txt 2>&1; echo "rc=$?" >> $O/gpu-$1.txt) &
}
C="reduce=cluster"
run_lane pa pipes_a $C; run_lane pb pipes_b $C; run_lane misc misc ""; run_lane llama llama ""; run_lane bf16 bf16 $C
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
(QJIT_CACHE_DIR=/tmp/qs timeout 140 $SAN --tool racecheck --error-exitcode 9 build-dev/qjit bench --scheme w4a8-lqq --shapes 256x1024 --m 100 --reps 5 --no-peers \
      --variant "pipe=tma;tile=128x128x128;warps=1x8;stages=4;split=2;reduce=cluster;wu8=1" > $O/san-racecheck.txt 2>&1
  echo "racecheck rc=$? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' $O/san-racecheck.txt | head -2 | tr '\n' ' ')" > $O/san.txt) &
wait
cat $O/san.txt
for f in $O/gpu-*.txt; do echo "== $(basename $f): $(grep -E 'Checks' $f) $(tail -1 $f) exact $(grep -c 'acc exact' $f) refused $(grep -c 'refused' $f)"; grep -E ":F:|:E:" $f | head -3 | cut -c1-300; done
echo "tests done at $(( $(date +%s) - T0 )) s"
for s in "w4a8-lqq 32,128,256" "w8a8 64,128"; do set -- $s; for t in base src; do
  QJIT_CACHE_DIR=/tmp/qb-$t timeout 70 /tmp/$t/build-dev/qjit bench --scheme $1 --no-peers --m $2 --reps 10 --csv $O/ab-$t-$1.csv > $O/ab-$t-$1.txt 2>&1
  echo "bench $t $1 rc=$? at $(( $(date +%s) - T0 )) s"
done; done
python3 - $O <<'PY'
import csv, sys, math
O = sys.argv[1]
for s in ("w4a8-lqq", "w8a8"):
    rows = {}
    for t in ("base", "src"):
        try:
            for r in csv.DictReader(open(f"{O}/ab-{t}-{s}.csv")):
                if r["forced"] == "0":
                    rows.setdefault((r["N"], r["K"], r["M"]), {})[t] = (float(r["tokens_us"]), float(r["qjit_us"]), r["variant"])
        except OSError: pass
    for M in sorted({k[2] for k in rows}, key=int):
        ks = [k for k in rows if k[2] == M and len(rows[k]) == 2]
        if not ks: continue
        g = math.exp(sum(math.log(rows[k]["base"][0] / rows[k]["src"][0]) for k in ks) / len(ks))
        f = math.exp(sum(math.log(rows[k]["base"][1] / rows[k]["src"][1]) for k in ks) / len(ks))
        cl = [k for k in ks if "reduce=cluster" in rows[k]["src"][2]]
        print(f"{s} M={M}: base/new geomean alone {g:.3f}, forward {f:.3f} over {len(ks)}; cluster kernels (alone us): " + " ".join(f"{k[0]}x{k[1]} {rows[k]['base'][0]:.2f}->{rows[k]['src'][0]:.2f}" for k in sorted(cl)))
PY
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c7.tgz .
