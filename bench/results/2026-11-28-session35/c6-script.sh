#!/bin/bash
# Session 35 call 6: what cuBLASLt runs where lqq still loses (4096x4096 M = 256, 12288x4096 M = 4096): ncu's
# launch statistics and speed of light for every non-qjit kernel of one bench point with the peers (names,
# grid, cluster, duration), beside the table's kernel.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD; T0=$(date +%s)
O=/tmp/o6; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s35c6.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli > $O/build.txt 2>&1 || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
Q=$root/build-dev/qjit
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
export QJIT_CACHE_DIR=/tmp/qb
for pt in "4096x4096 256" "12288x4096 4096"; do
  set -- $pt; s=${1%%x*}-$2
  timeout 100 $NCU --section LaunchStats --section SpeedOfLight --section Occupancy --kernel-name "regex:^(?!qjit_act|qjit_quant)" --launch-count 400 -o $O/k$s -f $Q bench --scheme w4a8-lqq --shapes $1 --m $2 --reps 5 > $O/k$s-run.txt 2>&1
  echo "ncu $s rc=$? at $(( $(date +%s) - T0 )) s"
  $NCU --import $O/k$s.ncu-rep --page raw --csv --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__cluster_dim_x,launch__cluster_dim_y,launch__registers_per_thread,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed > $O/k$s.csv 2>&1
  rm -f $O/k$s.ncu-rep
  python3 - $O/k$s.csv <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
if len(rows) < 3: print(open(sys.argv[1]).read()[:800]); sys.exit()
h = rows[0]; seen = {}
ki = h.index("Kernel Name")
cols = [c for c in h if c.startswith(("gpu__", "launch__", "sm__", "dram__"))]
for r in rows[2:]:
    name = r[ki][:90]
    seen.setdefault(name, []).append(r)
for name, rs in seen.items():
    r = rs[-1]
    print(f"{len(rs):3d}x {name}: " + ", ".join(f"{c.split('__')[1]}={r[h.index(c)]}" for c in cols))
PY
done
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c6.tgz .
