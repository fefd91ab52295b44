#!/bin/bash
# Session 43 call 4: the ring of residual blocks kept for the twins whose room would take a stage from a ring of 4
# (the persistent 128x256 tile), the room elsewhere (call 3: a ring of one or two tiles' blocks made K tiles wait).
# (1) exactness of the ring: forced 128x256 persistent rpieces=32 and 64x64 3-stage rpieces=8 on the 6 sparse
# configurations (rho 0.01 .. 1: at 1 every K tile fills the ring and waits for the one before), one test per
# process with a timeout of its own (a hang shows as an error); (2) the bench, M = 64..4096, 8 shapes in two runs,
# rho 0.05 / 0.1 (GEMM alone; every point checked exact first). Predicted: M >= 1024 and the 128x256 points at
# 256 / 512 as call 3 (-4..9 points against session 42's c6), the others as c6.
T0=$(date +%s)
O=/tmp/o4; rm -rf $O; mkdir -p $O
cp .devdeps/s43c4.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
(cd build-dev && QJIT_CACHE_DIR=/tmp/qt QJIT_TEST_PIPES="rpieces=32,stages=3;pipe=tma;producer=wg;rpieces" CK_RUN_CASE=sparse CK_DEFAULT_TIMEOUT=45 timeout 230 ./test_gpu > $O/gpu-sp.txt 2>&1; echo "rc=$?" >> $O/gpu-sp.txt)
echo "== gpu-sp: $(grep -E '^[0-9]+%: Checks' $O/gpu-sp.txt) $(tail -1 $O/gpu-sp.txt) exact $(grep -c 'acc exact' $O/gpu-sp.txt) at $(( $(date +%s) - T0 )) s"; grep -E ":F:|:E:" $O/gpu-sp.txt | head -5
Q=$PWD/build-dev/qjit
QJIT_CACHE_DIR=/tmp/qS timeout 150 $Q bench --scheme w4a8-lqq --sparsity 0.05,0.1 --no-peers --shapes 4096x4096,12288x4096,4096x11008,8192x8192 --m 64,128,256,512,1024,4096 --reps 10 --csv $O/big-1.csv > $O/big-1.txt 2>&1
echo "big-1 rc=$? at $(( $(date +%s) - T0 )) s"
QJIT_CACHE_DIR=/tmp/qS timeout 170 $Q bench --scheme w4a8-lqq --sparsity 0.05,0.1 --no-peers --shapes 22016x4096,10240x8192,57344x8192,8192x28672 --m 64,128,256,512,1024,4096 --reps 10 --csv $O/big-2.csv > $O/big-2.txt 2>&1
echo "big-2 rc=$? at $(( $(date +%s) - T0 )) s"
python3 - $O <<'PY'
import csv, sys, math, os
d = {}; var = {}
for f in ("big-1", "big-2"):
    p = f"{sys.argv[1]}/{f}.csv"
    if not os.path.exists(p): print(f, "missing"); continue
    for x in csv.DictReader(open(p)):
        k = (int(x["N"]), int(x["K"]), int(x["M"]), float(x["sparsity"])); d[k] = float(x["tokens_us"]); var[k] = x.get("variant", "")
for rho in (0.05, 0.1):
    o = [d[k] / d[(k[0], k[1], k[2], 0.0)] for k in d if k[3] == rho and d.get((k[0], k[1], k[2], 0.0), 0) > 0 and d[k] > 0]
    if o: print(f"rho={rho}: {len(o)} points over dense geomean {100*(math.exp(sum(map(math.log, o))/len(o))-1):+.1f}%, worst {100*(max(o)-1):+.1f}%")
    for m in (64, 128, 256, 512, 1024, 4096):
        o = [d[k] / d[(k[0], k[1], k[2], 0.0)] for k in d if k[3] == rho and k[2] == m and d.get((k[0], k[1], k[2], 0.0), 0) > 0 and d[k] > 0]
        if o: print(f"   M={m}: {100*(math.exp(sum(map(math.log, o))/len(o))-1):+.1f}%")
for k in sorted(d):
    if k[3] > 0: print("  ", k, f"{d[k]:.2f} dense {d[(k[0], k[1], k[2], 0.0)]:.2f} {100*(d[k]/d[(k[0], k[1], k[2], 0.0)]-1):+.1f}%", "ring" if "rpieces" in var[k] else "")
PY
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c4.tgz .
