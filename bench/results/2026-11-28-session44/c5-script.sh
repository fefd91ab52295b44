#!/bin/bash
# Session 44 call 5 (issue 14): the grouped room (one bulk copy per kept residual block's part of a tile), its MMA
# warps' address now the warp's hoisted place plus a constant where a block has <= 4 slabs in the tile (call 4's
# generic formula made the non-producer 128x128 TMA twin serialize its wgmmas, C7515, found by test_compile).
# (1) exactness: the sparse case on 9 TMA pipes (room; producer and not; 16..256-row tiles; every residual block
# shape of the 6 configs, so the >4-slab formula too), the sparse Llama layers through the table; (2) qjit bench
# old (HEAD) / new on 4 shapes x M = 16..1024 at rho 0.05 / 0.1. Predicted: exact; new/old ~0.99 (call 4: 0.993).
T0=$(date +%s)
O=/tmp/o5; rm -rf $O; mkdir -p $O
cp .devdeps/s44c5.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
P="tile=128x128x128;warps=1x8;stages=6;split=2;pipe=tma;reduce=cluster;producer=wg,tile=64x64x128;warps=1x4;stages=8;split=2;pipe=tma;reduce=cluster;producer=wg,tile=128x64x128;warps=1x4;stages=6;pipe=tma;producer=wg;persist=1"
P="$P,tile=128x128x128;warps=1x8;stages=4;split=2;pipe=tma;reduce=cluster,tile=64x128x128;warps=2x4;stages=8;split=2;pipe=tma;producer=wg,?tile=256x128x128;warps=2x4;stages=4;split=3;pipe=tma;producer=wg"
P="$P,tile=16x64x128;warps=1x4;stages=8;split=2;pipe=tma;reduce=cluster;producer=wg,tile=32x64x128;warps=1x4;stages=8;split=2;pipe=tma;reduce=cluster;producer=wg,?tile=128x256x128;warps=1x8;stages=4;split=2;pipe=tma;producer=wg"
(cd build-dev && QJIT_CACHE_DIR=/tmp/qt QJIT_TEST_PIPES="$P" CK_RUN_CASE=sparse CK_DEFAULT_TIMEOUT=60 timeout 190 ./test_gpu > $O/gpu-sp.txt 2>&1; echo "rc=$?" >> $O/gpu-sp.txt)
echo "== gpu-sp: $(grep -E '^[0-9]+%: Checks' $O/gpu-sp.txt) $(tail -1 $O/gpu-sp.txt) exact $(grep -c 'acc exact' $O/gpu-sp.txt) at $(( $(date +%s) - T0 )) s"; grep -E ":F:|:E:" $O/gpu-sp.txt | head -5
(cd build-dev && QJIT_CACHE_DIR=/tmp/qt CK_RUN_CASE=sparse_llama CK_DEFAULT_TIMEOUT=80 timeout 90 ./test_gpu > $O/gpu-spl.txt 2>&1; echo "rc=$?" >> $O/gpu-spl.txt)
echo "== gpu-spl: $(grep -E '^[0-9]+%: Checks' $O/gpu-spl.txt) $(tail -1 $O/gpu-spl.txt) at $(( $(date +%s) - T0 )) s"; grep -E ":F:|:E:" $O/gpu-spl.txt | head -5
export OLD=$PWD/.devdeps/tpl/M/templates NEW=$PWD/templates
Q=$PWD/build-dev/qjit
for t in new old; do
  TP=$NEW; [ $t = old ] && TP=$OLD
  QJIT_TEMPLATE_PATH=$TP QJIT_CACHE_DIR=/tmp/qB-$t timeout 80 $Q bench --scheme w4a8-lqq --sparsity 0.05,0.1 --no-peers --shapes 4096x4096,12288x4096,4096x11008,8192x8192 --m 16,64,128,256,1024 --reps 10 --csv $O/bench-$t.csv > $O/bench-$t.txt 2>&1
  echo "bench $t rc=$? at $(( $(date +%s) - T0 )) s"
done
python3 - $O <<'PY'
import csv, sys, math, os
for t in ("old", "new"):
    d = {}
    p = f"{sys.argv[1]}/bench-{t}.csv"
    if not os.path.exists(p): print(t, "missing"); continue
    for x in csv.DictReader(open(p)):
        d[(int(x["N"]), int(x["K"]), int(x["M"]), float(x["sparsity"]))] = float(x["tokens_us"])
    for rho in (0.05, 0.1):
        o = [d[k] / d[(k[0], k[1], k[2], 0.0)] for k in d if k[3] == rho and d.get((k[0], k[1], k[2], 0.0), 0) > 0 and d[k] > 0]
        if o: print(f"{t} rho={rho}: {len(o)} points geomean {100*(math.exp(sum(map(math.log, o))/len(o))-1):+.1f}%, worst {100*(max(o)-1):+.1f}%")
        print("   ", " ".join(f"{k[0]}x{k[1]}/{k[2]} {100*(d[k]/d[(k[0],k[1],k[2],0.0)]-1):+.1f}" for k in sorted(d) if k[3] == rho))
PY
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c5.tgz .
