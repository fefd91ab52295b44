#!/bin/bash
# Session 42 call 2 (working tree = main + gemm_decode.lua: a sparse decode twin keeps the dense kernel's CTAs an
# SM, one residual step, __launch_bounds__(.., dense CTAs)). .devdeps/tpl/M = main's templates.
# (1) Table A/B at few tokens: tree S (this) vs M, 4 shapes, M = 1, 8, 16, 32, rho 0.01 / 0.1. Prediction: the
#     8x16 decode twin (4096-row layers at M <= 8) from +30..36 % to within ~+10 % of dense (one wave again: 256
#     CTAs at two an SM); nothing else changes.
# (2) Forced: the decode twin at 4, 3, 2 stages (64 registers each; 4 and 3 spill 68 / 56 bytes, 2 none) at M = 1, 8.
# (3) Forced: the TMA pipe's producer tiles at few tokens (32x64, 16x64 at split 2 in a cluster, 8 stages), dense
#     and sparse, against the table's wgmma 32x64 / multistage 16x64 / decode twins; the wgmma 32x64 twin at 5 and 6
#     stages (3 CTAs an SM, like the dense one) to see whether its +35 % at M = 32 is the SM it keeps.
# (4) Session 41's occupancy test (64x64 producer tile, dense 8/6 stages, sparse 8/6/5) in two runs of <= 8 keys.
T0=$(date +%s)
O=/tmp/o2; rm -rf $O; mkdir -p $O
cp .devdeps/s42c2.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
Q=$PWD/build-dev/qjit
SH=4096x4096,12288x4096,4096x11008,8192x8192
for t in S M; do
  TPL=.devdeps/tpl/M/templates; [ $t = S ] && TPL=$PWD/templates
  QJIT_CACHE_DIR=/tmp/q$t QJIT_TEMPLATE_PATH=$TPL timeout 80 $Q bench --scheme w4a8-lqq --sparsity 0.01,0.1 --no-peers --shapes $SH --m 1,8,16,32 --reps 20 --csv $O/few-$t.csv > $O/few-$t.txt 2>&1
  echo "few $t rc=$? at $(( $(date +%s) - T0 )) s"
done
python3 - $O <<'PY'
import csv, sys, math
O = sys.argv[1]; R = {}
for t in "SM":
    d = {}
    for x in csv.DictReader(open(f"{O}/few-{t}.csv")):
        d[(int(x["N"]), int(x["K"]), int(x["M"]), float(x["sparsity"]))] = float(x["tokens_us"])
    R[t] = d
    for rho in (0.01, 0.1):
        o = [d[k] / d[(k[0], k[1], k[2], 0.0)] for k in d if k[3] == rho and d.get((k[0], k[1], k[2], 0.0), 0) > 0 and d[k] > 0]
        if o: print(f"tree {t} rho={rho}: {len(o)} points over dense geomean {100*(math.exp(sum(map(math.log, o))/len(o))-1):+.1f}%, worst {100*(max(o)-1):+.1f}%")
for k in sorted(R["S"]):
    if k[3] > 0: print("  ", k, f"S {R['S'][k]:.2f} M {R['M'].get(k, 0):.2f} dense S {R['S'].get((k[0], k[1], k[2], 0.0), 0):.2f} M {R['M'].get((k[0], k[1], k[2], 0.0), 0):.2f}")
PY
D="pipe=decode;tile=8x16x64;warps=1x16;split=1;reduce=global"
QJIT_CACHE_DIR=/tmp/qS timeout 60 $Q bench --scheme w4a8-lqq --sparsity 0.01 --no-peers --shapes 4096x4096,4096x11008 --m 1,8 --reps 30 \
  --variant "$D;stages=4" --variant "$D;stages=4;sparsity=0.01;rblock=64x64" --variant "$D;stages=3;sparsity=0.01;rblock=64x64" \
  --variant "$D;stages=2;sparsity=0.01;rblock=64x64" --csv $O/dec.csv > $O/dec.txt 2>&1
echo "dec rc=$? at $(( $(date +%s) - T0 )) s"
T="pipe=tma;warps=1x4;producer=wg;wu8=1;split=2;reduce=cluster;stages=8"
W="pipe=wgmma;tile=32x64x128;warps=1x4;wu8=1;split=2;reduce=cluster"
QJIT_CACHE_DIR=/tmp/qS timeout 100 $Q bench --scheme w4a8-lqq --sparsity 0.01 --no-peers --shapes $SH --m 8,16,32 --reps 30 \
  --variant "$T;tile=32x64x128" --variant "$T;tile=32x64x128;sparsity=0.01;rblock=64x64" \
  --variant "$T;tile=16x64x128" --variant "$T;tile=16x64x128;sparsity=0.01;rblock=64x64" \
  --variant "$W;stages=8;sparsity=0.01;rblock=64x64" --variant "$W;stages=6;sparsity=0.01;rblock=64x64" \
  --variant "$W;stages=5;sparsity=0.01;rblock=64x64" --variant "$W;stages=8" --csv $O/tok.csv > $O/tok.txt 2>&1
echo "tok rc=$? at $(( $(date +%s) - T0 )) s"
B="pipe=tma;tile=64x64x128;warps=1x4;producer=wg;wu8=1"
QJIT_CACHE_DIR=/tmp/qS timeout 60 $Q bench --scheme w4a8-lqq --sparsity 0.01 --no-peers --shapes 4096x4096,4096x11008 --m 64 --reps 30 \
  --variant "$B;split=2;reduce=cluster;stages=6" --variant "$B;split=2;reduce=cluster;stages=8" \
  --variant "$B;split=2;reduce=cluster;stages=8;sparsity=0.01;rblock=64x64" --variant "$B;split=2;reduce=cluster;stages=6;sparsity=0.01;rblock=64x64" \
  --variant "$B;split=2;reduce=cluster;stages=5;sparsity=0.01;rblock=64x64" --csv $O/occ1.csv > $O/occ1.txt 2>&1
echo "occ1 rc=$? at $(( $(date +%s) - T0 )) s"
QJIT_CACHE_DIR=/tmp/qS timeout 60 $Q bench --scheme w4a8-lqq --sparsity 0.01 --no-peers --shapes 4096x4096,4096x11008 --m 64 --reps 30 \
  --variant "$B;split=4;reduce=global;stages=6" --variant "$B;split=4;reduce=global;stages=8" \
  --variant "$B;split=4;reduce=global;stages=8;sparsity=0.01;rblock=64x64" --variant "$B;split=4;reduce=global;stages=6;sparsity=0.01;rblock=64x64" \
  --csv $O/occ2.csv > $O/occ2.txt 2>&1
echo "occ2 rc=$? at $(( $(date +%s) - T0 )) s"
python3 - $O <<'PY'
import csv, sys, os
for f in ("dec", "tok", "occ1", "occ2"):
    p = f"{sys.argv[1]}/{f}.csv"
    if not os.path.exists(p): print(f, "missing"); continue
    print("==", f)
    for x in csv.DictReader(open(p)):
        if x["forced"] != "1": continue
        v = x["variant"]; s = ";".join(g for g in v.split(";") if g.split("=")[0] in ("pipe", "tile", "warps", "split", "stages", "sparsity"))
        print(f"  {x['N']}x{x['K']} M={x['M']} rho={x['sparsity']} {s}: {float(x['tokens_us']):.2f} us")
PY
# The decode twins' correctness on this tree (its GPU case covers the decode pipe with a residual).
(cd build-dev && QJIT_CACHE_DIR=/tmp/qt QJIT_TEST_PIPES=decode CK_RUN_CASE=sparse CK_DEFAULT_TIMEOUT=300 timeout 120 ./test_gpu > $O/gpu-sp.txt 2>&1; echo "rc=$?" >> $O/gpu-sp.txt)
echo "== gpu-sp(decode): $(grep -E '^[0-9]+%: Checks' $O/gpu-sp.txt) $(tail -1 $O/gpu-sp.txt) exact $(grep -c 'acc exact' $O/gpu-sp.txt)"; grep -E ":F:|:E:" $O/gpu-sp.txt | head -3
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c2.tgz .
