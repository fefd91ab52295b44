#!/bin/bash
# Session 39 call 5 (main + the producer dispatch, final tree): issue 18 on the H200. The static table's bench with the
# cuBLAS peers (default shapes, M = 1..128), qjit tune of the eight default shapes (M up to 256), the bench again
# with the records; the records exported.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
T0=$(date +%s)
O=/tmp/o5; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s39c5.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
Q=$PWD/build-dev/qjit
D=12288x4096,4096x4096,22016x4096,4096x11008,10240x8192,8192x8192,57344x8192,8192x28672
QJIT_CACHE_DIR=/tmp/qu timeout 120 $Q bench --shapes $D --m 1,4,16,32,64,128 --reps 20 --csv $O/bench-h200-table.csv --json $O/bench-h200-table.json > $O/bench-h200-table.txt 2>&1
echo "bench table rc=$? at $(( $(date +%s) - T0 )) s"
sed -n '/^summary/,$p' $O/bench-h200-table.txt | head -12
export QJIT_CACHE_DIR=/tmp/qc
s=$(date +%s)
timeout 300 $Q tune --shapes $D --m 1,2,4,8,12,16,24,32,48,64,96,128,192,256 > $O/tune-h200.txt 2>&1
echo "tune rc=$? wall $(( $(date +%s) - s )) s" | tee -a $O/tune-h200.txt; grep -E "tuned in|geomean" $O/tune-h200.txt | head
$Q tune --export $O/h200.records > /dev/null
left=$(( 590 - ($(date +%s) - T0) ))
timeout $left $Q bench --shapes $D --m 1,4,16,32,64,128 --reps 20 --csv $O/bench-h200-tuned.csv --json $O/bench-h200-tuned.json > $O/bench-h200-tuned.txt 2>&1
echo "bench tuned rc=$? at $(( $(date +%s) - T0 )) s"
sed -n '/^summary/,$p' $O/bench-h200-tuned.txt | head -12
python3 - $O <<'PY'
import csv, sys
O = sys.argv[1]
for name in ("table", "tuned"):
    try: rows = [x for x in csv.DictReader(open(f"{O}/bench-h200-{name}.csv")) if x["forced"] == "0" and x["scheme"] == "w4a8-lqq"]
    except FileNotFoundError: continue
    win_f = win_t = 0; lose = []
    for x in rows:
        best = min(float(x[c]) for c in ("cublas_bf16_us", "cublas_int8_us", "cublas_fp8_us") if float(x[c]) > 0)
        f, t = best / float(x["qjit_us"]), best / float(x["tokens_us"])
        win_f += f > 1; win_t += t > 1
        if f <= 1 or t <= 1: lose.append(f"{x['N']}x{x['K']} M={x['M']}: fwd {f:.2f}x tok {t:.2f}x (qjit {float(x['qjit_us']):.2f} / {float(x['tokens_us']):.2f}, best cuBLAS {best:.2f})")
    print(f"{name}: {len(rows)} points M<=128; faster than best cuBLAS: forward {win_f}, GEMM alone {win_t}")
    for l in lose: print("   " + l)
PY
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c5.tgz .
