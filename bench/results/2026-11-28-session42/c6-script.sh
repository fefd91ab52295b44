#!/bin/bash
# Session 42 call 6 (main 1ea068d): the issue's target measured past the few-token buckets: the table on the 8
# default shapes at M = 64 .. 4096, rho 0.05 / 0.1, GEMM alone (call 5 has M = 1 .. 32), in two runs of 4 shapes so
# that a timeout keeps half. Nothing changed there this session: expected as session 41 (+11..20 %).
T0=$(date +%s)
O=/tmp/o6; rm -rf $O; mkdir -p $O
cp .devdeps/s42c6.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
Q=$PWD/build-dev/qjit
QJIT_CACHE_DIR=/tmp/qS timeout 130 $Q bench --scheme w4a8-lqq --sparsity 0.05,0.1 --no-peers --shapes 4096x4096,12288x4096,4096x11008,8192x8192 --m 64,128,256,512,1024,4096 --reps 10 --csv $O/big-1.csv > $O/big-1.txt 2>&1
echo "big-1 rc=$? at $(( $(date +%s) - T0 )) s"
QJIT_CACHE_DIR=/tmp/qS timeout 150 $Q bench --scheme w4a8-lqq --sparsity 0.05,0.1 --no-peers --shapes 22016x4096,10240x8192,57344x8192,8192x28672 --m 64,128,256,512,1024,4096 --reps 10 --csv $O/big-2.csv > $O/big-2.txt 2>&1
echo "big-2 rc=$? at $(( $(date +%s) - T0 )) s"
python3 - $O <<'PY'
import csv, sys, math, os
d = {}
for f in ("big-1", "big-2"):
    p = f"{sys.argv[1]}/{f}.csv"
    if not os.path.exists(p): print(f, "missing"); continue
    for x in csv.DictReader(open(p)):
        d[(int(x["N"]), int(x["K"]), int(x["M"]), float(x["sparsity"]))] = float(x["tokens_us"])
for rho in (0.05, 0.1):
    o = [d[k] / d[(k[0], k[1], k[2], 0.0)] for k in d if k[3] == rho and d.get((k[0], k[1], k[2], 0.0), 0) > 0 and d[k] > 0]
    if o: print(f"rho={rho}: {len(o)} points over dense geomean {100*(math.exp(sum(map(math.log, o))/len(o))-1):+.1f}%, worst {100*(max(o)-1):+.1f}%")
for k in sorted(d):
    if k[3] > 0: print("  ", k, f"{d[k]:.2f} dense {d[(k[0], k[1], k[2], 0.0)]:.2f} {100*(d[k]/d[(k[0], k[1], k[2], 0.0)]-1):+.1f}%")
PY
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c6.tgz .
