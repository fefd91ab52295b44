#!/bin/bash
# Session 38 call 4 (H200, main 5cd53e6): deeper rings for the small-M split-K TMA kernels. Tree X = main with
# the key's stages range 2..16 (each pipe's plan checks its own limits). Forced variants, GEMM alone (bench checks each
# bit-exact first), on 4096x4096 and 4096x11008 at M = 64 / 128; the stamps harness on two deep-ring variants (XS).
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
T0=$(date +%s)
O=/tmp/o4; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s38c4.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit qjit_cli > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
gcc -O2 -Wall -I include -I /usr/local/cuda/include $orig/.devdeps/stamps.c -o $O/stamps -L build-dev -lqjit -L /usr/local/cuda/lib64/stubs -lcuda -Wl,-rpath,$PWD/build-dev || { echo HARNESS FAILED; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
Q=$PWD/build-dev/qjit; TX=$orig/.devdeps/tpl/X/templates
B="pipe=tma;scheme=w4a8-lqq;wu8=1"
VA="$B;tile=64x64x128;warps=1x4;stages=8;split=2;reduce=cluster"
VB="$B;tile=64x64x128;warps=1x4;stages=16;split=2;reduce=cluster"
VC="$B;tile=64x64x128;warps=1x4;stages=16;split=2"
VD="$B;tile=64x128x128;warps=1x8;stages=4;split=2;reduce=cluster"
VE="$B;tile=64x128x128;warps=1x8;stages=12;split=2;reduce=cluster"
VF="$B;tile=128x64x128;warps=1x4;stages=10;split=2;reduce=cluster"
VH="$B;tile=64x64x128;warps=1x4;stages=16;split=1"
VI="$B;tile=64x128x128;warps=1x8;stages=13;split=4"
VJ="$B;tile=128x128x128;warps=1x8;stages=8;split=4;producer=wg"
VK="$B;tile=64x128x128;warps=1x8;stages=13;split=4;reduce=cluster"
VL="$B;tile=128x128x128;warps=1x8;stages=6;split=4;producer=wg"
for r in 1 2; do
QJIT_CACHE_DIR=/tmp/qX QJIT_TEMPLATE_PATH=$TX timeout 120 $Q bench --scheme w4a8-lqq --no-peers --shapes 4096x4096 --m 64,128 --reps 30 \
  --variant "$VA" --variant "$VB" --variant "$VC" --variant "$VD" --variant "$VE" --variant "$VF" --variant "$VH" --csv $O/sq-$r.csv > $O/sq-$r.txt 2>&1
echo "sq $r rc=$? at $(( $(date +%s) - T0 )) s"
QJIT_CACHE_DIR=/tmp/qX QJIT_TEMPLATE_PATH=$TX timeout 120 $Q bench --scheme w4a8-lqq --no-peers --shapes 4096x11008,12288x4096 --m 64,128 --reps 30 \
  --variant "$VI" --variant "$VJ" --variant "$VK" --variant "$VL" --variant "$VE" --variant "$VB" --csv $O/sw-$r.csv > $O/sw-$r.txt 2>&1
echo "sw $r rc=$? at $(( $(date +%s) - T0 )) s"
done
grep -E "WRONG|error|refused" $O/sq-*.txt $O/sw-*.txt | head
python3 - $O <<'PY'
import csv, sys, collections
O = sys.argv[1]
d = collections.defaultdict(list)
for f in ("sq-1", "sq-2", "sw-1", "sw-2"):
    try:
        for r in csv.DictReader(open(f"{O}/{f}.csv")):
            v = r["variant"] if r["forced"] != "0" else "TABLE " + r["variant"]
            v = v.replace("actq=kernel;arch=sm_90a;epi=f16;g=128;kernel=gemm;", "").replace("scheme=w4a8-lqq;", "")
            d[(int(r["N"]), int(r["K"]), int(r["M"]), v)].append(float(r["tokens_us"]))
    except FileNotFoundError: pass
last = None
for k in sorted(d):
    if k[:3] != last: print(f"{k[0]}x{k[1]} M={k[2]}"); last = k[:3]
    print(f"   {min(d[k]):7.2f}  ({' / '.join(f'{x:.2f}' for x in d[k])})  {k[3]}")
PY
TS=$orig/.devdeps/tpl/XS/templates
one() { QJIT_CACHE_DIR=/tmp/qXS QJIT_TEMPLATE_PATH=$TS timeout 60 $O/stamps $2 $3 $4 "$5" 24 > $O/st-$1.txt 2>&1; echo "st $1 rc=$?"; }
one m64B 4096 4096 64 "$VB"
one m128E 4096 4096 128 "$VE"
python3 $orig/.devdeps/qsan.py $O/st-*.txt > $O/stamps.txt 2>&1
awk '/ launch /{p = / launch 22:/} p' $O/stamps.txt
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c4.tgz .
