#!/bin/bash
# Session 41 call 4 (branch wip-sparse-rmma): the warpgroup kernels' residual as MMAs of R8 after the dense steps
# (tree N) against main's fold under a tile test (tree R = .devdeps/tpl/M), one binary: w4a8-lqq, 4 shapes, rho
# 0.01 / 0.1, M = 16..1024, GEMM alone; stamps; then the sparse GPU suite on the warpgroup pipes (4 processes),
# sparse_llama, and memcheck.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
T0=$(date +%s)
O=/tmp/o4; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s41c4.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu qjit_stamps > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
Q=$PWD/build-dev/qjit
for t in N R; do
  TPL=$orig/.devdeps/tpl/M/templates; [ $t = N ] && TPL=$PWD/templates
  QJIT_CACHE_DIR=/tmp/q$t QJIT_TEMPLATE_PATH=$TPL timeout 130 $Q bench --scheme w4a8-lqq --sparsity 0.01,0.1 --no-peers --shapes 4096x4096,12288x4096,4096x11008,8192x8192 --m 16,64,128,256,1024 --reps 20 --csv $O/ab-$t.csv > $O/ab-$t.txt 2>&1
  echo "ab $t rc=$? at $(( $(date +%s) - T0 )) s"
done
python3 - $O <<'PY'
import csv, sys, math
O = sys.argv[1]
R = {}
for t in "RN":
    d = {}
    try:
        for x in csv.DictReader(open(f"{O}/ab-{t}.csv")):
            d[(int(x["N"]), int(x["K"]), int(x["M"]), float(x["sparsity"]))] = float(x["tokens_us"])
    except FileNotFoundError: pass
    R[t] = d
for t in "RN":
    d = R[t]
    for rho in (0.01, 0.1):
        for lo, hi in ((1, 32), (64, 1024)):
            o = [d[k] / d[(k[0], k[1], k[2], 0.0)] for k in d if k[3] == rho and lo <= k[2] <= hi and (k[0], k[1], k[2], 0.0) in d]
            if o: print(f"tree {t} rho={rho} M={lo}..{hi}: {len(o)} points, over dense geomean {100*(math.exp(sum(map(math.log, o))/len(o))-1):+.1f}%, worst {100*(max(o)-1):+.1f}%")
ks = [k for k in R["N"] if k[3] > 0 and k in R["R"]]
if ks:
    g = math.exp(sum(math.log(R["R"][k] / R["N"][k]) for k in ks) / len(ks))
    print(f"sparse R/N (>1: the new tree faster) geomean {g:.3f} over {len(ks)} points")
    for k in sorted(ks): print(f"   {k}: R {R['R'][k]:.2f}  N {R['N'][k]:.2f}  dense N {R['N'].get((k[0], k[1], k[2], 0.0), 0):.2f}")
PY
TS=/tmp/tpl-st; python3 bench/stamps/instrument.py templates $TS/templates > /dev/null
for sh in "4096 4096 64" "12288 4096 128"; do
  set -- $sh
  for r in 0 0.01 0.1; do
    QJIT_CACHE_DIR=/tmp/qst QJIT_TEMPLATE_PATH=$TS/templates timeout 60 build-dev/qjit_stamps $1 $2 $3 - 24 $r > $O/st-$1x$2m$3-$r.txt 2>&1
    python3 bench/stamps/phases.py $O/st-$1x$2m$3-$r.txt | awk '/ launch /{p = / launch 22:/} p' > $O/ph-$1x$2m$3-$r.txt
    echo "$1x$2 M=$3 rho=$r: $(grep -E 'gap tile (0->1|8->9)|CTA duration' $O/ph-$1x$2m$3-$r.txt | awk '{printf "%s %s %s  ", $1, $3, $7}')"
  done
done
echo "stamps done at $(( $(date +%s) - T0 )) s"
cd build-dev
G=("pipe=wgmma,rslots" "producer=wg;persist,producer=wg;excp,pingpong"
   "split=2;pipe=tma;producer=wg,split=5;pipe=tma;producer=wg,split=3;pipe=tma;producer=wg,reduce=cluster;producer=wg"
   "stages=5;split=2;pipe=tma,stages=4;split=2;pipe=tma;reduce=cluster,split=3;pipe=tma;reduce=cluster,split=4;pipe=tma;reduce=cluster,stages=6;split=5;pipe=tma")
for i in 0 1 2 3; do
  (QJIT_TEST_PIPES="${G[$i]}" QJIT_CACHE_DIR=/tmp/qt$i CK_RUN_CASE=sparse CK_DEFAULT_TIMEOUT=600 timeout 280 ./test_gpu > $O/gpu-sp$i.txt 2>&1; echo "rc=$?" >> $O/gpu-sp$i.txt) &
done
(QJIT_CACHE_DIR=/tmp/qt9 CK_RUN_CASE=sparse_llama CK_DEFAULT_TIMEOUT=600 timeout 280 ./test_gpu > $O/gpu-spl.txt 2>&1; echo "rc=$?" >> $O/gpu-spl.txt) &
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
(QJIT_TEST_PIPES="tile=64x64x128;warps=1x4;stages=8;split=2;pipe=tma;reduce=cluster;producer=wg,tile=128x64x128;warps=1x4;stages=6;pipe=tma;producer=wg;persist=1,tile=32x64x128;warps=1x4;stages=8;split=2;pipe=wgmma" \
   QJIT_CACHE_DIR=/tmp/qs CK_RUN_CASE=sparse CK_DEFAULT_TIMEOUT=600 timeout 280 $SAN --tool memcheck --error-exitcode 9 ./test_gpu > $O/san-memcheck.txt 2>&1; echo "memcheck rc=$?" > $O/san.txt) &
wait; cat $O/san.txt; tail -3 $O/san-memcheck.txt
for f in $O/gpu-sp*.txt; do echo "== $(basename $f): $(grep -E '^[0-9]+%: Checks' $f) $(tail -1 $f) exact $(grep -c 'acc exact' $f)"; grep -E ":F:|:E:" $f | head -3; done
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c4.tgz .
