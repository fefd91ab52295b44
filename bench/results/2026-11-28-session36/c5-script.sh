#!/bin/bash
# Session 36 call 5: the cluster split-K's fix-up by st.async (peers store the rows each owns into its shared
# memory, counted on its mbarrier; one relaxed cluster barrier, no fences). (1) exactness lanes filtered to
# reduce=cluster for every scheme (pipes, BF16, bias, w4ax, w4ax-s) and the llama / misc lanes through the tables;
# compute-sanitizer memcheck, racecheck, synccheck on cluster kernels; (2) A/B against 2d2f0d1, lqq and w8a8,
# M = 16..256, GEMM alone and forward; (3) the 4096-wide layers with the cuBLAS peers.
orig=$PWD; rm -rf /tmp/src /tmp/base && mkdir -p /tmp/src /tmp/base && tar -C /tmp/src -xzf .devdeps/tree.tgz && tar -C /tmp/base -xzf .devdeps/base.tgz || exit 1
T0=$(date +%s)
O=/tmp/o5; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s36c5.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cd /tmp/src && cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build-src.txt 2>&1) &
(cd /tmp/base && cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j8 --target qjit_cli > $O/build-base.txt 2>&1) &
wait
[ -x /tmp/src/build-dev/test_gpu ] && [ -x /tmp/base/build-dev/qjit ] || { echo BUILD FAILED; tail $O/build-*.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
cd /tmp/src
run_lane() {  # name case pipes
  (cd build-dev && QJIT_TEST_PIPES="$3" QJIT_CACHE_DIR=/tmp/qt-$1 CK_RUN_CASE=$2 CK_DEFAULT_TIMEOUT=600 timeout 190 ./test_gpu > $O/gpu-$1.txt 2>&1; echo "rc=$?" >> $O/gpu-$1.txt) &
}
C="reduce=cluster"
run_lane pa pipes_a $C; run_lane pb pipes_b $C; run_lane bf16 bf16 $C; run_lane bias bias $C
run_lane w4ax w4ax $C; run_lane w4axs w4axs $C; run_lane misc misc ""; run_lane llama llama ""
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
V1="pipe=tma;tile=128x128x128;warps=1x8;stages=6;split=2;reduce=cluster;producer=wg;wu8=1"
V2="pipe=tma;tile=128x64x128;warps=1x4;stages=8;split=4;reduce=cluster"
(for tool in memcheck racecheck synccheck; do
  QJIT_CACHE_DIR=/tmp/qs timeout 120 $SAN --tool $tool --error-exitcode 9 build-dev/qjit bench --scheme w4a8-lqq --shapes 1024x1024 --m 200 --reps 5 --no-peers \
      --variant "$V1" --variant "$V2" > $O/san-$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $O/san-$tool.txt | head -2 | tr '\n' ' ')" >> $O/san.txt
done) &
wait
cat $O/san.txt
for f in $O/gpu-*.txt; do echo "== $(basename $f): $(grep -E 'Checks' $f) $(tail -1 $f) exact $(grep -c 'acc exact' $f) refused $(grep -c 'refused' $f)"; grep -E ":F:|:E:" $f | head -3 | cut -c1-300; done
echo "tests done at $(( $(date +%s) - T0 )) s"
for s in w4a8-lqq w8a8; do for t in base src; do
  QJIT_CACHE_DIR=/tmp/qb-$t timeout 100 /tmp/$t/build-dev/qjit bench --scheme $s --no-peers --m 16,32,64,128,256 --reps 10 --csv $O/ab-$t-$s.csv > $O/ab-$t-$s.txt 2>&1
  echo "bench $t $s rc=$? at $(( $(date +%s) - T0 )) s"
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
        print(f"{s} M={M}: base/new geomean alone {g:.3f}, forward {f:.3f} over {len(ks)}; cluster kernels: " + " ".join(f"{k[0]}x{k[1]} {rows[k]['base'][0]:.2f}->{rows[k]['src'][0]:.2f}" for k in sorted(cl)))
PY
left=$(( 570 - ($(date +%s) - T0) ))
QJIT_CACHE_DIR=/tmp/qb-src timeout $left build-dev/qjit bench --scheme w4a8-lqq --shapes 4096x4096,4096x11008 --m 64,128,256 --reps 10 --csv $O/peers.csv > $O/peers.txt 2>&1
echo "peers rc=$?"; grep -E "^w4a8" $O/peers.txt
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c5.tgz .
