#!/bin/bash
# Session 36 call 2: (1) the 256x128 warps=1x8 tile at 129..256 tokens on long-K layers (seen and unseen), split 2 / 4,
# workspace and cluster, beside the table; (2) ncu --set full of the table kernel at 4096x4096 M = 256 and of
# cuBLASLt's FP8 kernel there; (3) a K sweep at N = 4096, M = 256 with the peers (fixed cost against K);
# (4) the cluster form's exactness (4 stages).
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
T0=$(date +%s)
O=/tmp/o2; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s36c2.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
Q=$PWD/build-dev/qjit; export QJIT_CACHE_DIR=/tmp/qb
(cd build-dev && QJIT_TEST_PIPES="tile=256x128x128;warps=1x8;stages=4;split=2" QJIT_CACHE_DIR=/tmp/qt CK_RUN_CASE=pipes_a CK_DEFAULT_TIMEOUT=600 timeout 100 ./test_gpu > $O/gpu-pa.txt 2>&1; echo "rc=$?" >> $O/gpu-pa.txt;
 QJIT_TEST_PIPES="tile=256x128x128;warps=1x8;stages=4;split=2" QJIT_CACHE_DIR=/tmp/qt CK_RUN_CASE=pipes_b CK_DEFAULT_TIMEOUT=600 timeout 100 ./test_gpu > $O/gpu-pb.txt 2>&1; echo "rc=$?" >> $O/gpu-pb.txt)
for f in $O/gpu-*.txt; do echo "== $(basename $f): $(grep -E 'Checks' $f) $(tail -1 $f) exact $(grep -c 'acc exact' $f) refused $(grep -c 'refused' $f)"; grep -E ":F:|:E:" $f | head -3 | cut -c1-300; done
echo "tests done at $(( $(date +%s) - T0 )) s"
B="pipe=tma;tile=256x128x128;warps=1x8;producer=wg;wu8=1;stages=4"
timeout 200 $Q bench --scheme w4a8-lqq --no-peers --shapes 4096x4096,4096x11008,8192x28672,8192x8192,4096x14336,8192x22016,3584x18944,5120x13824 --m 192,256 --reps 10 \
  --variant "$B;split=2" --variant "$B;split=4" --variant "$B;split=2;reduce=cluster" --variant "$B;split=4;reduce=cluster" --csv $O/v.csv > $O/v.txt 2>&1
echo "variants rc=$? at $(( $(date +%s) - T0 )) s"
python3 - $O/v.csv <<'PY'
import csv,sys
rows={}
for r in csv.DictReader(open(sys.argv[1])):
    v=';'.join(x for x in r['variant'].split(';') if x.split('=')[0] in ('tile','warps','stages','persist','sk','split','reduce'))
    rows.setdefault((int(r['M']),int(r['N']),int(r['K'])),[]).append((float(r['tokens_us']),r['forced'],v))
for k in sorted(rows):
    t=[x for x in rows[k] if x[1]=='0']; base=t[0][0] if t else None
    print(f"M={k[0]} {k[1]}x{k[2]}: " + " | ".join(f"{x[0]:.2f}{'' if not base else ' (%.3f)'%(base/x[0])} {'T' if x[1]=='0' else ''}{x[2]}" for x in rows[k]))
PY
timeout 120 $Q bench --scheme w4a8-lqq --shapes 4096x1024,4096x2048,4096x4096,4096x8192 --m 128,256 --reps 10 --csv $O/ksweep.csv > $O/ksweep.txt 2>&1
echo "ksweep rc=$? at $(( $(date +%s) - T0 )) s"; grep -E "^w4a8" $O/ksweep.txt
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
prof() { # name regex skip shape M peers
  timeout 90 $NCU --set full --import-source no --kernel-name regex:"$2" --launch-skip $3 --launch-count 1 -o $O/$1 -f $Q bench --scheme w4a8-lqq --shapes $4 --m $5 --reps 5 $6 > $O/$1-run.txt 2>&1
  echo "ncu $1 rc=$? at $(( $(date +%s) - T0 )) s"
  $NCU --import $O/$1.ncu-rep --page details > $O/ncu-$1.txt 2>&1
  $NCU --import $O/$1.ncu-rep --page raw --csv > $O/raw-$1.csv 2>&1; gzip -f $O/raw-$1.csv
  rm -f $O/$1.ncu-rep
  echo "== $1"; grep -E "^  [a-zA-Z_0-9]+.*\(|Duration|DRAM Throughput|Memory Throughput|L2 Hit Rate|Compute \(SM\) Throughput|Cluster Size|Grid Size|Block Size|Registers Per|Achieved Occ|One or More Eligible|Warp Cycles Per Issued" $O/ncu-$1.txt | head -20
}
prof q qjit_gemm_tma 8 4096x4096 256 --no-peers
prof c "e4m3|f8|fp8" 1 4096x4096 256 ""
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c2.tgz .
