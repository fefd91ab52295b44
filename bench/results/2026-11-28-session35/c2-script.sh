#!/bin/bash
# Session 35 call 2: wu8's row sums as the sums' start (lib/wu8_start.cu) instead of the epilogue's subtraction.
# (1) exactness, lqq lanes (forced wgmma/tma pipes with and without wu8, persistent, sk, llama, odd, bias, bf16,
# misc), memcheck on a wu8 persistent sk kernel; (2) A/B against 99dd5eb, GEMM alone and forward, M = 128..4096;
# (3) the persistent 128x128 (6 stages, sk) beside the table at M = 256 / 512 on the N >= 10240 layers.
orig=$PWD; rm -rf /tmp/src /tmp/base && mkdir -p /tmp/src /tmp/base && tar -C /tmp/src -xzf .devdeps/tree.tgz && tar -C /tmp/base -xzf .devdeps/base.tgz || exit 1
T0=$(date +%s)
O=/tmp/o2; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s35c2.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
for t in src base; do (cd /tmp/$t && cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build-$t.txt 2>&1) || { echo BUILD $t FAILED; tail $O/build-$t.txt; exit 1; }; done
echo "built $(( $(date +%s) - T0 )) s"
cd /tmp/src
L=w4a8-lqq
run_lane() {  # name case pipes schemes
  (cd build-dev && QJIT_TEST_PIPES="$3" QJIT_TEST_SCHEMES="$4" QJIT_CACHE_DIR=/tmp/qt-$1 CK_RUN_CASE=$2 CK_DEFAULT_TIMEOUT=600 timeout 200 ./test_gpu > $O/gpu-$1.txt 2>&1; echo "rc=$?" >> $O/gpu-$1.txt) &
}
run_lane pa pipes_a "pipe=wgmma,pipe=tma" $L
run_lane pb pipes_b "pipe=wgmma,pipe=tma" $L
run_lane sk sk "" $L
run_lane llama llama "" $L
run_lane odd odd "" $L
run_lane bias bias "" $L
run_lane bf16 bf16 "" $L
run_lane misc misc "" $L
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
(QJIT_CACHE_DIR=/tmp/qs timeout 150 $SAN --tool memcheck --error-exitcode 9 build-dev/qjit bench --scheme $L --shapes 2048x1024 --m 300 --reps 5 --no-peers \
      --variant "pipe=tma;tile=128x128x128;warps=1x8;stages=6;producer=wg;persist=1;sk=1;wu8=1" \
      --variant "pipe=tma;tile=128x128x128;warps=1x8;stages=4;split=2;wu8=1" > $O/san-memcheck.txt 2>&1
  echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $O/san-memcheck.txt | head -1)" > $O/san.txt) &
wait
cat $O/san.txt
for f in $O/gpu-*.txt; do echo "== $(basename $f): $(grep -E 'Checks' $f) $(tail -1 $f) exact $(grep -c 'acc exact' $f) refused $(grep -c 'refused' $f) skipped $(grep -c 'not run' $f)"; grep -E ":F:|:E:" $f | head -3 | cut -c1-300; done
echo "tests done at $(( $(date +%s) - T0 )) s"
for t in base src; do
  QJIT_CACHE_DIR=/tmp/qb-$t timeout 130 /tmp/$t/build-dev/qjit bench --scheme $L --no-peers --m 128,256,512,1024,4096 --reps 10 --csv $O/ab-$t.csv > $O/ab-$t.txt 2>&1
  echo "bench $t rc=$? at $(( $(date +%s) - T0 )) s"
done
python3 - $O <<'PY'
import csv, sys, math
O = sys.argv[1]
rows = {}
for t in ("base", "src"):
    try:
        for r in csv.DictReader(open(f"{O}/ab-{t}.csv")):
            if r["forced"] == "0":
                rows.setdefault((r["N"], r["K"], r["M"]), {})[t] = (float(r["tokens_us"]), float(r["qjit_us"]), r["variant"])
    except OSError:
        pass
for M in sorted({k[2] for k in rows}, key=int):
    ks = [k for k in rows if k[2] == M and len(rows[k]) == 2]
    if not ks: continue
    g = math.exp(sum(math.log(rows[k]["base"][0] / rows[k]["src"][0]) for k in ks) / len(ks))
    f = math.exp(sum(math.log(rows[k]["base"][1] / rows[k]["src"][1]) for k in ks) / len(ks))
    print(f"M={M}: base/new geomean GEMM alone {g:.3f}, forward {f:.3f} over {len(ks)}: " + " ".join(f"{k[0]}x{k[1]} {rows[k]['base'][0]:.1f}->{rows[k]['src'][0]:.1f}" for k in sorted(ks)))
PY
left=$(( 590 - ($(date +%s) - T0) ))
V="pipe=tma;tile=128x128x128;warps=1x8;producer=wg;persist=1;sk=1;wu8=1;stages=6"
QJIT_CACHE_DIR=/tmp/qb-src timeout $left build-dev/qjit bench --scheme $L --no-peers --shapes 12288x4096,22016x4096,10240x8192,57344x8192 --m 256,512 --reps 10 \
  --variant "$V" --variant "pipe=tma;tile=128x256x128;warps=1x8;producer=wg;persist=1;sk=1;wu8=1;stages=4" --csv $O/v.csv > $O/v.txt 2>&1
echo "variants rc=$?"
python3 - $O/v.csv <<'PY'
import csv,sys
for r in csv.DictReader(open(sys.argv[1])):
    v=';'.join(x for x in r['variant'].split(';') if x.split('=')[0] in ('tile','stages','persist','split'))
    print(r['N'],r['K'],r['M'],r['forced'],r['tokens_us'],v)
PY
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c2.tgz .
