#!/usr/bin/env bash
# Session 22, call 11: does the INT8 share change a layer's time (the load-balance question of issue 15)?
# w4ax-s and w4ax at INT8 shares 0, 0.1 and 1 on three shapes. Prediction: w4ax-s flat (+-1 %) in the share
# (every block is an INT8 operand on sm_90 and every output tile runs the same K range), so tiles are even
# at any map; w4ax flat too (its two sums cost per tile, not per block).
set -u
out=$OUT; T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi -L > $out/device.txt 2>&1; cat $out/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && timeout 240 cmake --build build-dev -j16 --target qjit_cli) > $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
stamp built
export QJIT_CACHE_DIR=/tmp/qc
for a in 0 0.1 1; do
  timeout 100 ./build-dev/qjit bench --scheme w4ax-s,w4ax --a8 $a --no-peers --reps 10 --m 1,64,1024,4096 --shapes 4096x4096,22016x4096,8192x28672 --csv $out/share-$a.csv > $out/share-$a.txt 2>&1; echo "a8 $a rc=$?"
  stamp "a8 $a"
done
python3 - $out <<'PY'
import csv, sys
o = sys.argv[1]
d = {}
for a in ("0", "0.1", "1"):
    for r in csv.DictReader(open(f"{o}/share-{a}.csv")):
        if r["forced"] == "0": d[(r["scheme"], r["N"], r["K"], r["M"], a)] = float(r["qjit_us"])
for k in sorted({k[:4] for k in d}):
    v = [d.get(k + (a,), 0) for a in ("0", "0.1", "1")]
    print("%-7s %5sx%-5s M=%-5s a8 0: %8.2f  0.1: %8.2f (%.3f)  1: %8.2f (%.3f)" % (k[0], k[1], k[2], k[3], v[0], v[1], v[1] / v[0], v[2], v[2] / v[0]))
PY
