#!/bin/bash
# Session 34 call 1: the half-room epilogue (exp-half-room + per-warpgroup "freed" barriers).
# (1) exactness: persistent pipes of every scheme (pipes_a/b persist=1), sk, bias, bf16, llama; sanitizers on a
#     two-warpgroup persistent tile walking several tiles a CTA (concurrently);
# (2) A/B against 291995f, GEMM alone, default dispatch; (3) variant rows at the stages the room frees.
orig=$PWD; rm -rf /tmp/src /tmp/base && mkdir -p /tmp/src /tmp/base && tar -C /tmp/src -xzf .devdeps/tree.tgz && tar -C /tmp/base -xzf .devdeps/base.tgz || exit 1
T0=$(date +%s)
O=/tmp/o1; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s34c1.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
for t in src base; do (cd /tmp/$t && cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build-$t.txt 2>&1) || { echo BUILD $t FAILED; tail $O/build-$t.txt; exit 1; }; done
echo "built $(( $(date +%s) - T0 )) s"
cd /tmp/src
P="persist=1"
run_lane() {  # name case pipes schemes
  (cd build-dev && QJIT_TEST_PIPES="$3" QJIT_TEST_SCHEMES="$4" QJIT_CACHE_DIR=/tmp/qt-$1 CK_RUN_CASE=$2 CK_DEFAULT_TIMEOUT=600 timeout 200 ./test_gpu > $O/gpu-$1.txt 2>&1; echo "rc=$?" >> $O/gpu-$1.txt) &
}
run_lane pa-l pipes_a "$P" "w4a8-lqq"
run_lane pa-q pipes_a "$P" "w4a8-qoq"
run_lane pa-x pipes_a "$P" "w4a8-is,w8a8,w4a4"
run_lane pb-l pipes_b "$P" "w4a8-lqq"
run_lane pb-q pipes_b "$P" "w4a8-qoq"
run_lane pb-x pipes_b "$P" "w4a8-is,w8a8,w4a4"
run_lane sk sk "" "w4a8-lqq,w8a8"
run_lane bias bias "$P" ""
run_lane bf16 bf16 "$P" "w4a8-lqq,w8a8"
run_lane llama llama "" "w4a8-lqq,w8a8,w4a8-is"
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
(for tool in racecheck synccheck memcheck; do
  QJIT_CACHE_DIR=/tmp/qs timeout 110 $SAN --tool $tool --error-exitcode 9 build-dev/qjit bench --shapes 8192x1024 --m 300 --reps 5 --no-peers \
      --variant "pipe=tma;tile=128x128x128;warps=1x8;stages=6;producer=wg;persist=1;sk=1" > $O/san-$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|hazard' $O/san-$tool.txt | head -2 | tr '\n' ' ')" >> $O/san.txt
done) &
wait
cat $O/san.txt
for f in $O/gpu-*.txt; do echo "== $(basename $f): $(grep -E 'Checks' $f) $(tail -1 $f) exact $(grep -c 'acc exact' $f) refused $(grep -c 'refused' $f) skipped $(grep -c 'not run' $f)"; grep -E ":F:|:E:" $f | head -3 | cut -c1-300; done
echo "tests done at $(( $(date +%s) - T0 )) s"
ab() { # scheme Ms
  for t in base src; do
    QJIT_CACHE_DIR=/tmp/qb-$t timeout 90 /tmp/$t/build-dev/qjit bench --scheme $1 --no-peers --m $2 --reps 10 --csv $O/ab-$t-$1.csv > $O/ab-$t-$1.txt 2>&1
    echo "bench $t $1 rc=$? at $(( $(date +%s) - T0 )) s"
  done
}
ab w4a8-lqq 256,512,1024,4096
ab w8a8 512,4096
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
vrow() { # name scheme Ms variant...
  n=$1 s=$2 m=$3; shift 3; V=(); for v in "$@"; do V+=(--variant "$v"); done
  QJIT_CACHE_DIR=/tmp/qb-src timeout 100 /tmp/src/build-dev/qjit bench --scheme $s --no-peers --m $m --reps 10 "${V[@]}" --csv $O/v-$n.csv > $O/v-$n.txt 2>&1
  echo "variants $n rc=$? at $(( $(date +%s) - T0 )) s"
}
vrow lqq w4a8-lqq 1024,4096 "pipe=tma;tile=128x256x128;warps=1x8;stages=4;producer=wg;persist=1;sk=1" "pipe=tma;tile=128x256x128;warps=1x8;stages=5;producer=wg;persist=1;sk=1"
vrow w8 w8a8 512,4096 "pipe=tma;tile=256x128x128;warps=2x4;stages=3;producer=wg;persist=1;sk=1" "pipe=tma;tile=256x128x128;warps=2x4;stages=4;producer=wg;persist=1;sk=1"
python3 - $O <<'PY'
import csv, sys, math, collections
O = sys.argv[1]
for n in ("lqq", "w8"):
    try: rows = list(csv.DictReader(open(f"{O}/v-{n}.csv")))
    except OSError: continue
    t = collections.defaultdict(dict)
    for r in rows:
        t[(r["M"], r["forced"], r["variant"])][(r["N"], r["K"])] = float(r["tokens_us"])
    for M in sorted({k[0] for k in t}, key=int):
        keys = [k for k in t if k[0] == M]
        base = [k for k in keys if k[1] == "0"][0]
        for k in keys:
            common = [s for s in t[k] if s in t[base]]
            g = math.exp(sum(math.log(t[base][s] / t[k][s]) for s in common) / len(common)) if common else 0
            print(f"{n} M={M} forced={k[1]} {k[2][-60:]}: default/this {g:.3f} " + " ".join(f"{s[0]}x{s[1]} {t[k][s]:.1f}" for s in sorted(common)))
PY
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c1.tgz .
