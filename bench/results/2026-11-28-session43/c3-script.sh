#!/bin/bash
# Session 43 call 3: the residual's blocks in a ring of their own (rpieces) for the producer warpgroup's twins.
# (1) exactness: the forced rpieces pipes (sparse case, 6 configurations incl. rho 0.5 / 1 where the ring wraps
# and waits) and the table's twins on the Llama layers (sparse_llama); (2) the bench of session 42's call 6 half 1
# (4 shapes x M = 64..4096, rho 0.05 / 0.1), to compare with c6-big-1 (+16.6 / +22.9 % at M = 4096 there).
# Prediction: M >= 1024 (persistent 128x256, 3 -> 4 stages) -7 points (call 2: Z2d - Z); M = 64..512 (64x64 /
# 128x64 / 128x128 twins, which kept their stages) unchanged to -1 (the first block's place is read on the fold
# path only).
T0=$(date +%s)
O=/tmp/o3; rm -rf $O; mkdir -p $O
cp .devdeps/s43c3.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli qjit_stamps test_gpu > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
(cd build-dev && QJIT_CACHE_DIR=/tmp/qt QJIT_TEST_PIPES="rpieces" CK_RUN_CASE=sparse CK_DEFAULT_TIMEOUT=300 timeout 170 ./test_gpu > $O/gpu-sp.txt 2>&1; echo "rc=$?" >> $O/gpu-sp.txt)
echo "== gpu-sp: $(grep -E '^[0-9]+%: Checks' $O/gpu-sp.txt) $(tail -1 $O/gpu-sp.txt) exact $(grep -c 'acc exact' $O/gpu-sp.txt) at $(( $(date +%s) - T0 )) s"; grep -E ":F:|:E:" $O/gpu-sp.txt | head -5
(cd build-dev && QJIT_CACHE_DIR=/tmp/qt CK_RUN_CASE=sparse_llama CK_DEFAULT_TIMEOUT=300 timeout 100 ./test_gpu > $O/gpu-spl.txt 2>&1; echo "rc=$?" >> $O/gpu-spl.txt)
echo "== gpu-spl: $(grep -E '^[0-9]+%: Checks' $O/gpu-spl.txt) $(tail -1 $O/gpu-spl.txt) exact $(grep -c 'acc exact' $O/gpu-spl.txt) at $(( $(date +%s) - T0 )) s"; grep -E ":F:|:E:" $O/gpu-spl.txt | head -5
Q=$PWD/build-dev/qjit
QJIT_CACHE_DIR=/tmp/qS timeout 170 $Q bench --scheme w4a8-lqq --sparsity 0.05,0.1 --no-peers --shapes 4096x4096,12288x4096,4096x11008,8192x8192 --m 64,128,256,512,1024,4096 --reps 10 --csv $O/big-1.csv > $O/big-1.txt 2>&1
echo "big-1 rc=$? at $(( $(date +%s) - T0 )) s"
python3 - $O <<'PY'
import csv, sys, math, os
d = {}; var = {}
p = f"{sys.argv[1]}/big-1.csv"
if os.path.exists(p):
    for x in csv.DictReader(open(p)):
        k = (int(x["N"]), int(x["K"]), int(x["M"]), float(x["sparsity"])); d[k] = float(x["tokens_us"]); var[k] = x.get("variant", "")
for rho in (0.05, 0.1):
    o = [d[k] / d[(k[0], k[1], k[2], 0.0)] for k in d if k[3] == rho and d.get((k[0], k[1], k[2], 0.0), 0) > 0 and d[k] > 0]
    if o: print(f"rho={rho}: {len(o)} points over dense geomean {100*(math.exp(sum(map(math.log, o))/len(o))-1):+.1f}%, worst {100*(max(o)-1):+.1f}%")
    for m in (64, 128, 256, 512, 1024, 4096):
        o = [d[k] / d[(k[0], k[1], k[2], 0.0)] for k in d if k[3] == rho and k[2] == m and d.get((k[0], k[1], k[2], 0.0), 0) > 0 and d[k] > 0]
        if o: print(f"   M={m}: {100*(math.exp(sum(map(math.log, o))/len(o))-1):+.1f}%")
for k in sorted(d):
    if k[3] > 0: print("  ", k, f"{d[k]:.2f} dense {d[(k[0], k[1], k[2], 0.0)]:.2f} {100*(d[k]/d[(k[0], k[1], k[2], 0.0)]-1):+.1f}%", var[k][:200])
PY
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c3.tgz .
