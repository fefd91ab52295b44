#!/bin/bash
# Session 36 call 6: why the st.async cluster fix-up slowed the two-CTAs-an-SM kernels (10240x8192 M = 128,
# 8192x28672 M = 256: 1.35x in call 5) -- ncu launch statistics and occupancy of the kernel (HEAD's templates and
# the new ones), and event times of three template trees (HEAD, new, new with __maxnreg__(112) on the
# non-producer cluster kernels: 128 -> 112 registers a thread).
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
T0=$(date +%s)
O=/tmp/o6; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s36c6.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
Q=$PWD/build-dev/qjit; TP=$orig/.devdeps/tpl
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for t in base new new112; do
  QJIT_CACHE_DIR=/tmp/q$t QJIT_TEMPLATE_PATH=$TP/$t/templates timeout 60 $NCU --section LaunchStats --section Occupancy --kernel-name regex:qjit_gemm_tma --launch-skip 6 --launch-count 1 $Q bench --scheme w4a8-lqq --no-peers --shapes 8192x28672 --m 256 --reps 5 > $O/ncu-$t.txt 2>&1
  echo "== ncu $t rc=$?"; grep -E "Registers Per|Block Limit|Theoretical Occ|Achieved Occ|Dynamic Shared|Static Shared|Cluster Size|Grid Size" $O/ncu-$t.txt | sed 's/^ */  /'
done
echo "ncu done at $(( $(date +%s) - T0 )) s"
for t in base new new112; do
  QJIT_CACHE_DIR=/tmp/q$t QJIT_TEMPLATE_PATH=$TP/$t/templates timeout 80 $Q bench --scheme w4a8-lqq --no-peers --shapes 10240x8192,8192x28672,4096x4096,8192x8192,4096x11008 --m 128,256 --reps 10 --csv $O/ab-$t.csv > $O/ab-$t.txt 2>&1
  echo "bench $t rc=$? at $(( $(date +%s) - T0 )) s"
done
python3 - $O <<'PY'
import csv, sys
O = sys.argv[1]; rows = {}
for t in ("base", "new", "new112"):
    for r in csv.DictReader(open(f"{O}/ab-{t}.csv")):
        if r["forced"] == "0":
            rows.setdefault((int(r["M"]), r["N"], r["K"]), {})[t] = (float(r["tokens_us"]), float(r["qjit_us"]), r["variant"])
for k in sorted(rows):
    v = rows[k].get("base", (0, 0, ""))[2]; v = ';'.join(x for x in v.split(';') if x.split('=')[0] in ('tile','split','reduce','producer','stages'))
    print(f"M={k[0]} {k[1]}x{k[2]}: alone " + " / ".join(f"{rows[k][t][0]:.2f}" for t in ("base","new","new112") if t in rows[k]) + "  forward " + " / ".join(f"{rows[k][t][1]:.2f}" for t in ("base","new","new112") if t in rows[k]) + f"   {v}")
PY
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c6.tgz .
