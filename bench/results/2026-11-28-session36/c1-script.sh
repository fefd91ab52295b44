#!/bin/bash
# Session 36 call 1: 256 tokens a warpgroup (tile=256x128x128;warps=1x8: wgmma N = 256, each MMA warpgroup
# dequantizes its 64 weight rows once for 256 tokens). (1) exactness: the new forced variants for every scheme
# (pipes, persistent, sk, bias, bf16 lanes filtered to them); (2) variant rows beside the table, lqq, 8 shapes,
# M = 256..4096: persistent 3 stages (with and without sk), one CTA a tile at 5 stages; split 2 / 4 at M = 256.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
T0=$(date +%s)
O=/tmp/o1; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s36c1.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
F="tile=256x128x128;warps=1x8"
run_lane() {  # name case
  (cd build-dev && QJIT_TEST_PIPES="$F" QJIT_CACHE_DIR=/tmp/qt-$1 CK_RUN_CASE=$2 CK_DEFAULT_TIMEOUT=600 timeout 190 ./test_gpu > $O/gpu-$1.txt 2>&1; echo "rc=$?" >> $O/gpu-$1.txt) &
}
run_lane pa pipes_a; run_lane pb pipes_b; run_lane sk sk; run_lane bias bias; run_lane bf16 bf16
wait
for f in $O/gpu-*.txt; do echo "== $(basename $f): $(grep -E 'Checks' $f) $(tail -1 $f) exact $(grep -c 'acc exact' $f) refused $(grep -c 'refused' $f)"; grep -E ":F:|:E:" $f | head -3 | cut -c1-300; done
echo "tests done at $(( $(date +%s) - T0 )) s"
Q=build-dev/qjit; export QJIT_CACHE_DIR=/tmp/qb
A="pipe=tma;tile=256x128x128;warps=1x8;producer=wg;persist=1;wu8=1;stages=3"
B="pipe=tma;tile=256x128x128;warps=1x8;producer=wg;wu8=1;stages=5"
timeout 230 $Q bench --scheme w4a8-lqq --no-peers --m 256,512,1024,4096 --reps 10 \
  --variant "$A" --variant "$A;sk=1" --variant "$B;split=1" --csv $O/v1.csv > $O/v1.txt 2>&1
echo "variants 1 rc=$? at $(( $(date +%s) - T0 )) s"
left=$(( 560 - ($(date +%s) - T0) ))
timeout $left $Q bench --scheme w4a8-lqq --no-peers --m 256 --reps 10 \
  --variant "$B;split=2;reduce=cluster" --variant "$B;split=4;reduce=cluster" --variant "$B;split=2" --csv $O/v2.csv > $O/v2.txt 2>&1
echo "variants 2 rc=$? at $(( $(date +%s) - T0 )) s"
python3 - $O/v1.csv $O/v2.csv <<'PY'
import csv,sys
rows={}
for f in sys.argv[1:]:
    try:
        for r in csv.DictReader(open(f)):
            v=';'.join(x for x in r['variant'].split(';') if x.split('=')[0] in ('tile','warps','stages','persist','sk','split','reduce'))
            rows.setdefault((int(r['M']),int(r['N']),int(r['K'])),[]).append((float(r['tokens_us']),r['forced'],v))
    except OSError: pass
for k in sorted(rows):
    t=[x for x in rows[k] if x[1]=='0']
    base=t[0][0] if t else None
    print(f"M={k[0]} {k[1]}x{k[2]}: " + " | ".join(f"{x[0]:.2f}{'' if not base else ' (%.3f)'%(base/x[0])} {'T' if x[1]=='0' else ''}{x[2]}" for x in rows[k]))
PY
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c1.tgz .
