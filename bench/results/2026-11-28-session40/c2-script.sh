#!/bin/bash
# Session 40 call 2: where the sparse kernels' fixed cost goes, with the residual in the producer warpgroup.
# (1) ncu (full set, per-SASS stall samples) of the dense and sparse GEMM on 12288x4096 at M = 128 (128x128 TMA,
# 6 stages, split 1) and M = 64 (64x64, dense 8 stages, sparse 6); (2) the budget's fixed part: rho 0.01 / 0.05 / 0.1
# on 3 shapes; (3) dense twins forced: without wu8, and at the sparse twin's 6 stages.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
T0=$(date +%s)
O=/tmp/o2; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s40c2.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
Q=$PWD/build-dev/qjit
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for m in 128 64; do for k in dense sparse; do
  if [ $k = dense ]; then RX='regex:^qjit_gemm_tma_w4a8_lqq$'; SP=0; else RX='regex:^qjit_gemm_tma_w4a8_lqq_sparse$'; SP=0,0.1; fi
  QJIT_CACHE_DIR=/tmp/qn timeout 100 $NCU --clock-control none --set full --import-source no --kernel-name "$RX" --launch-count 1 -o $O/rep-$k-$m \
    $Q bench --scheme w4a8-lqq --shapes 12288x4096 --m $m --reps 5 --no-peers --sparsity $SP > $O/ncu-run-$k-$m.txt 2>&1
  echo "ncu $k $m rc=$? $(( $(date +%s) - T0 )) s"
  $NCU --import $O/rep-$k-$m.ncu-rep --page details > $O/ncu-$k-$m.txt 2>&1
  $NCU --import $O/rep-$k-$m.ncu-rep --page source --print-source sass --csv > $O/src-$k-$m.csv 2>&1
  $NCU --import $O/rep-$k-$m.ncu-rep --page raw --csv > $O/raw-$k-$m.csv 2>&1
  rm -f $O/rep-$k-$m.ncu-rep
done; done
for f in $O/ncu-dense-*.txt $O/ncu-sparse-*.txt; do echo "== $f"; grep -E "qjit_gemm|Duration|Compute \(SM\) Throughput|DRAM Throughput|L2 Cache Throughput|Issue Slots Busy|Registers Per|Warp Cycles Per Issued|Executed Instructions  |Stall" $f | head -16; done
echo "ncu done at $(( $(date +%s) - T0 )) s"
QJIT_CACHE_DIR=/tmp/qb timeout 200 $Q bench --scheme w4a8-lqq --sparsity 0.01,0.05,0.1 --no-peers --shapes 12288x4096,8192x8192,4096x11008 --m 64,128,256,1024 --reps 20 --csv $O/rho.csv > $O/rho.txt 2>&1
echo "rho rc=$? at $(( $(date +%s) - T0 )) s"
V=(--variant "pipe=tma;tile=64x64x128;warps=1x4;stages=6;split=1;producer=wg;wu8=1" --variant "pipe=tma;tile=64x64x128;warps=1x4;stages=8;split=1;producer=wg"
   --variant "pipe=tma;tile=128x128x128;warps=1x8;stages=6;split=1;producer=wg")
QJIT_CACHE_DIR=/tmp/qb timeout 100 $Q bench --scheme w4a8-lqq --no-peers --shapes 12288x4096,8192x8192 --m 64,128 --reps 20 "${V[@]}" --csv $O/forced.csv > $O/forced.txt 2>&1
echo "forced rc=$? at $(( $(date +%s) - T0 )) s"
python3 - $O <<'PY'
import csv, sys, math
O = sys.argv[1]
d = {}
for f in ("rho.csv", "forced.csv"):
    try:
        for x in csv.DictReader(open(f"{O}/{f}")):
            k = (int(x["N"]), int(x["K"]), int(x["M"]))
            tag = x["variant"].replace("actq=kernel;arch=sm_90a;epi=f16;g=128;kernel=gemm;", "").replace(";scheme=w4a8-lqq", "") if x["forced"] != "0" else "rho=" + x["sparsity"]
            d.setdefault(k, {})[tag] = float(x["tokens_us"])
    except FileNotFoundError: pass
for k in sorted(d):
    base = d[k].get("rho=0")
    print(k, " ".join(f"{t}: {v:.2f}" + (f" ({100*(v/base-1):+.0f}%)" if base else "") for t, v in d[k].items()))
PY
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c2.tgz .
