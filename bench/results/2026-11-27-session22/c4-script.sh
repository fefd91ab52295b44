#!/usr/bin/env bash
# Session 22, call 4: where w4ax-s in place loses to w4a4 at K = 4096 (table a: +1.4 us at M = 1, +20 us at
# M = 4096 on 4096x4096, while 4096x11008 M = 1 is within 0.3 us): each kernel of the forward timed by ncu
# (w4a4 vs w4ax-s, the activation kernel and the GEMM apart), and the activation kernels alone to M = 1024.
set -u
out=$OUT; T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi -L > $out/device.txt 2>&1; cat $out/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && timeout 240 cmake --build build-dev -j16 --target qjit_cli qjit_static) > $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
gcc -O2 -I base -I codegen -I include -I runtime -I cache -I /usr/local/cuda/include .devdeps/tools/act_time.c build-dev/libqjit.a -L/usr/local/cuda/lib64 -lnvrtc -llua5.4 -lm -lpthread -ldl -o act_time >> $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
stamp built
export QJIT_CACHE_DIR=/tmp/qc
A="kernel=act-quant;arch=sm_90a"
timeout 60 ./act_time "$A;bits=4;threads=512" "$A;bits=8+4;scales=1;inplace=1;threads=512" "$A;bits=8+4;cache=8192;threads=512" > $out/act-time.txt 2>&1; echo "rc=$?" >> $out/act-time.txt
cat $out/act-time.txt
stamp timed
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: $NCU"
for s in w4a4 w4ax-s; do
  timeout 150 $NCU --clock-control none --kernel-name regex:qjit_ --launch-skip 0 --launch-count 400 --csv \
    --metrics gpu__time_duration.sum,smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__registers_per_thread,launch__grid_size \
    ./build-dev/qjit bench --scheme $s --no-peers --reps 3 --m 1,4096 --shapes 4096x4096,4096x11008 > $out/ncu-$s.csv 2> $out/ncu-$s.err
  echo "$s rc=$?"
  stamp ncu-$s
done
python3 - "$out" <<'PY'
import csv, sys, collections
out = sys.argv[1]
for s in ("w4a4", "w4ax-s"):
    lines = open(f"{out}/ncu-{s}.csv").read().splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    if start is None:
        print(s, "no ncu rows"); continue
    agg = collections.defaultdict(list)
    for r in csv.DictReader(lines[start:]):
        agg[(r["Kernel Name"][:60], r["Grid Size"] if "Grid Size" in r else "", r["Metric Name"])].append(r["Metric Value"])
    for (k, g, m), v in sorted(agg.items()):
        vals = sorted(float(x.replace(",", "")) for x in v)
        print(s, k, g, m, "n=%d median %.4g" % (len(vals), vals[len(vals) // 2]))
PY
stamp done
