#!/bin/bash
# Session 42 call 5 (main 1ea068d + nothing: the committed tree). (1) GPU: the sparse case on the new few-token TMA
# tiles (16 tokens at 6 stages new) and the decode twins; the Llama-size sparse layers through the table
# (sparse_llama: 11008x4096 now takes the 6-stage 16-token tile at M <= 16). (2) The table at few tokens on the 8
# default shapes, rho 0.05 / 0.1, M = 1, 4, 16, 32 (call 3's main-templates run is the baseline). Prediction: the
# layers past 8192 rows at M <= 16 from +19..+74 % to call 4's forced rows (+1..+18 %), the rest as call 3.
# (3) Other decode twins for 4096x11008 (and 4096x4096) at M = 1, 8, where the 2-stage 8x16 twin still costs +23 %.
T0=$(date +%s)
O=/tmp/o5; rm -rf $O; mkdir -p $O
cp .devdeps/s42c5.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
Q=$PWD/build-dev/qjit
QJIT_CACHE_DIR=/tmp/qS timeout 150 $Q bench --scheme w4a8-lqq --sparsity 0.05,0.1 --no-peers --m 1,4,16,32 --reps 20 --csv $O/few-S.csv > $O/few-S.txt 2>&1
echo "few S rc=$? at $(( $(date +%s) - T0 )) s"
python3 - $O <<'PY'
import csv, sys, math
d = {}
for x in csv.DictReader(open(sys.argv[1] + "/few-S.csv")):
    d[(int(x["N"]), int(x["K"]), int(x["M"]), float(x["sparsity"]))] = (float(x["tokens_us"]), x["variant"])
for rho in (0.05, 0.1):
    o = [d[k][0] / d[(k[0], k[1], k[2], 0.0)][0] for k in d if k[3] == rho and (k[0], k[1], k[2], 0.0) in d and d[k][0] > 0]
    print(f"rho={rho}: {len(o)} points over dense geomean {100*(math.exp(sum(map(math.log, o))/len(o))-1):+.1f}%, worst {100*(max(o)-1):+.1f}%")
def short(v): return ";".join(g for g in v.split(";") if g.split("=")[0] in ("pipe", "tile", "warps", "stages", "split"))
for k in sorted(d):
    if k[3] > 0:
        s, dn = d[k], d[(k[0], k[1], k[2], 0.0)]
        print("  ", k, f"{s[0]:.2f} dense {dn[0]:.2f} {100*(s[0]/dn[0]-1):+.1f}%", short(s[1]) if k[3] == 0.05 else "")
PY
D="pipe=decode;split=1;reduce=global;sparsity=0.05;rblock=64x64"
QJIT_CACHE_DIR=/tmp/qS timeout 60 $Q bench --scheme w4a8-lqq --sparsity 0.05 --no-peers --shapes 4096x4096,4096x11008 --m 1,8 --reps 30 \
  --variant "$D;tile=8x16x64;warps=1x8;stages=2" --variant "$D;tile=8x16x64;warps=1x8;stages=4" \
  --variant "$D;tile=8x32x64;warps=1x8;stages=3" --variant "$D;tile=8x32x64;warps=1x16;stages=4" \
  --variant "$D;tile=16x16x64;warps=1x16;stages=2" --csv $O/dec.csv > $O/dec.txt 2>&1
echo "dec rc=$? at $(( $(date +%s) - T0 )) s"
python3 - $O <<'PY'
import csv, sys
for x in csv.DictReader(open(sys.argv[1] + "/dec.csv")):
    v = x["variant"]; s = ";".join(g for g in v.split(";") if g.split("=")[0] in ("pipe", "tile", "warps", "stages"))
    print(f"  {x['N']}x{x['K']} M={x['M']} rho={x['sparsity']} forced={x['forced']} {s}: {float(x['tokens_us']):.2f} us")
PY
(cd build-dev && QJIT_CACHE_DIR=/tmp/qt QJIT_TEST_PIPES="tile=16x64x128;warps=1x4;stages=6,pipe=decode" CK_RUN_CASE=sparse CK_DEFAULT_TIMEOUT=300 timeout 120 ./test_gpu > $O/gpu-sp.txt 2>&1; echo "rc=$?" >> $O/gpu-sp.txt)
echo "== gpu-sp: $(grep -E '^[0-9]+%: Checks' $O/gpu-sp.txt) $(tail -1 $O/gpu-sp.txt) exact $(grep -c 'acc exact' $O/gpu-sp.txt) at $(( $(date +%s) - T0 )) s"; grep -E ":F:|:E:" $O/gpu-sp.txt | head -3
(cd build-dev && QJIT_CACHE_DIR=/tmp/qt CK_RUN_CASE=sparse_llama CK_DEFAULT_TIMEOUT=400 timeout 220 ./test_gpu > $O/gpu-spl.txt 2>&1; echo "rc=$?" >> $O/gpu-spl.txt)
echo "== gpu-spl: $(grep -E '^[0-9]+%: Checks' $O/gpu-spl.txt) $(tail -1 $O/gpu-spl.txt) exact $(grep -c 'acc exact' $O/gpu-spl.txt) at $(( $(date +%s) - T0 )) s"; grep -E ":F:|:E:" $O/gpu-spl.txt | head -3
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c5.tgz .
