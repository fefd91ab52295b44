#!/bin/bash
# Session 37 call 1: exp-s37 = main + (a) the epilogue's loads before the main loop in CTA-a-tile producer=wg
# kernels (lib/epi_pre.cu), (b) sk slices' partials four to a 16-byte word. (1) exactness lanes filtered to
# producer=wg (every scheme; pipes, bias, BF16, w4ax, w4ax-s), the sk and llama lanes; memcheck on a producer
# kernel and an sk kernel; (2) A/B against main (1a71b44), lqq M = 128..4096, w8a8 M = 512 / 4096, GEMM alone
# and forward (per-point variants tell which change acted: sk=1 or not).
orig=$PWD; rm -rf /tmp/src /tmp/base && mkdir -p /tmp/src /tmp/base && tar -C /tmp/src -xzf .devdeps/tree.tgz && tar -C /tmp/base -xzf .devdeps/base.tgz || exit 1
T0=$(date +%s)
O=/tmp/o1; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s37c1.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cd /tmp/src && cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build-src.txt 2>&1) &
(cd /tmp/base && cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j8 --target qjit_cli > $O/build-base.txt 2>&1) &
wait
[ -x /tmp/src/build-dev/test_gpu ] && [ -x /tmp/base/build-dev/qjit ] || { echo BUILD FAILED; tail $O/build-*.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
cd /tmp/src
run_lane() {  # name case pipes
  (cd build-dev && QJIT_TEST_PIPES="$3" QJIT_CACHE_DIR=/tmp/qt-$1 CK_RUN_CASE=$2 CK_DEFAULT_TIMEOUT=600 timeout 180 ./test_gpu > $O/gpu-$1.txt 2>&1; echo "rc=$?" >> $O/gpu-$1.txt) &
}
C="producer=wg"
run_lane pa pipes_a $C; run_lane pb pipes_b $C; run_lane bf16 bf16 $C; run_lane bias bias $C
run_lane w4ax w4ax $C; run_lane w4axs w4axs $C; run_lane sk sk ""; run_lane llama llama ""
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
V1="pipe=tma;tile=128x128x128;warps=1x8;stages=6;split=2;reduce=cluster;producer=wg;wu8=1"
V2="pipe=tma;tile=128x128x128;warps=1x8;stages=6;split=1;producer=wg;wu8=1"
V3="pipe=tma;tile=128x256x128;warps=1x8;stages=4;split=1;producer=wg;persist=1;sk=1;wu8=1"
(QJIT_CACHE_DIR=/tmp/qs timeout 150 $SAN --tool memcheck --error-exitcode 9 build-dev/qjit bench --scheme w4a8-lqq --shapes 1024x1024 --m 200 --reps 5 --no-peers \
      --variant "$V1" --variant "$V2" --variant "$V3" > $O/san-memcheck.txt 2>&1
  echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $O/san-memcheck.txt | head -3 | tr '\n' ' ')" > $O/san.txt) &
wait
cat $O/san.txt
for f in $O/gpu-*.txt; do echo "== $(basename $f): $(grep -E 'Checks' $f) $(tail -1 $f) exact $(grep -c 'acc exact' $f) refused $(grep -c 'refused' $f)"; grep -E ":F:|:E:" $f | head -3 | cut -c1-300; done
echo "tests done at $(( $(date +%s) - T0 )) s"
for s in "w4a8-lqq 128,256,512,1024,4096" "w8a8 512,4096"; do set -- $s; for t in base src; do
  QJIT_CACHE_DIR=/tmp/qb-$t timeout 90 /tmp/$t/build-dev/qjit bench --scheme $1 --no-peers --m $2 --reps 10 --csv $O/ab-$t-$1.csv > $O/ab-$t-$1.txt 2>&1
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
        print(f"{s} M={M}: base/new geomean alone {g:.3f}, forward {f:.3f} over {len(ks)}")
        for k in sorted(ks, key=lambda k: (int(k[0]), int(k[1]))):
            v = rows[k]["src"][2]; tag = "sk" if "sk=1" in v else ("pwg" if "producer=wg" in v and "persist" not in v else "-")
            print(f"   {k[0]}x{k[1]} {tag:3s} {rows[k]['base'][0]:9.2f} -> {rows[k]['src'][0]:9.2f}  ({rows[k]['base'][0]/rows[k]['src'][0]:.3f})")
PY
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c1.tgz .
