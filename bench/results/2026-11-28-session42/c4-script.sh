#!/bin/bash
# Session 42 call 4 (working tree as call 3). (1) Candidates for sparse weights at M <= 32 past 8192 rows, where the
# dense choice's twins still cost +12..+74 % (call 3): the TMA producer tiles at split 1 (192..896 CTAs of 64 rows:
# one wave at two an SM up to 16896 rows) and at split 2 with 6 stages (three an SM), and the 64x64 tile at split 1,
# rho 0.05, M = 1, 16, 32. (2) GPU: the Llama-size sparse layers through the table (sparse_llama).
T0=$(date +%s)
O=/tmp/o4; rm -rf $O; mkdir -p $O
cp .devdeps/s42c4.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
Q=$PWD/build-dev/qjit
T="pipe=tma;warps=1x4;producer=wg;wu8=1;sparsity=0.05;rblock=64x64"
QJIT_CACHE_DIR=/tmp/qS timeout 200 $Q bench --scheme w4a8-lqq --sparsity 0.05 --no-peers --shapes 12288x4096,22016x4096,10240x8192,57344x8192 --m 1,16,32 --reps 20 \
  --variant "$T;tile=16x64x128;split=1;stages=8" --variant "$T;tile=32x64x128;split=1;stages=8" \
  --variant "$T;tile=16x64x128;split=2;reduce=cluster;stages=6" --variant "$T;tile=32x64x128;split=2;reduce=cluster;stages=6" \
  --variant "$T;tile=64x64x128;split=1;stages=8" --csv $O/wide.csv > $O/wide.txt 2>&1
echo "wide rc=$? at $(( $(date +%s) - T0 )) s"
python3 - $O <<'PY'
import csv, sys
rows = {}
for x in csv.DictReader(open(sys.argv[1] + "/wide.csv")):
    v = x["variant"]; s = ";".join(g for g in v.split(";") if g.split("=")[0] in ("pipe", "tile", "stages", "split"))
    s = ("forced " if x["forced"] == "1" else "table  ") + s + (" SP" if "sparsity" in v else "")
    rows.setdefault((x["N"], x["K"]), {}).setdefault(s, {})[x["M"]] = float(x["tokens_us"])
for sh in rows:
    print(sh)
    for s in rows[sh]: print("   %-70s" % s, " ".join("%7.2f" % rows[sh][s].get(m, 0) for m in ("1", "16", "32")))
PY
(cd build-dev && QJIT_CACHE_DIR=/tmp/qt CK_RUN_CASE=sparse_llama CK_DEFAULT_TIMEOUT=400 timeout 300 ./test_gpu > $O/gpu-spl.txt 2>&1; echo "rc=$?" >> $O/gpu-spl.txt)
echo "== gpu-spl: $(grep -E '^[0-9]+%: Checks' $O/gpu-spl.txt) $(tail -1 $O/gpu-spl.txt) exact $(grep -c 'acc exact' $O/gpu-spl.txt) at $(( $(date +%s) - T0 )) s"; grep -E ":F:|:E:" $O/gpu-spl.txt | head -3
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c4.tgz .
