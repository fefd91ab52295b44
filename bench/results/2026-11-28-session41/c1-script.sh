#!/bin/bash
# Session 41 call 1 (branch wip-sparse-rcarry, tree.tgz = its HEAD): each K tile's residual word carried from the
# tile before (p.rcarry, tree N) against main's templates (tree R = .devdeps/tpl/M), one binary: w4a8-lqq, 4 shapes,
# rho 0.01 / 0.1, M = 64..1024, GEMM alone; then stamps and the sparse TMA lane + memcheck on the branch.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
T0=$(date +%s)
O=/tmp/o1; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s41c1.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu qjit_stamps > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
Q=$PWD/build-dev/qjit
for t in R N; do
  TPL=$orig/.devdeps/tpl/M/templates; [ $t = N ] && TPL=$PWD/templates
  QJIT_CACHE_DIR=/tmp/q$t QJIT_TEMPLATE_PATH=$TPL timeout 80 $Q bench --scheme w4a8-lqq --sparsity 0.01,0.1 --no-peers --shapes 4096x4096,12288x4096,4096x11008,8192x8192 --m 64,128,256,1024 --reps 20 --csv $O/ab-$t.csv > $O/ab-$t.txt 2>&1
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
        o = [d[k] / d[(k[0], k[1], k[2], 0.0)] for k in d if k[3] == rho and (k[0], k[1], k[2], 0.0) in d]
        if o: print(f"tree {t} rho={rho}: {len(o)} points, over dense geomean {100*(math.exp(sum(map(math.log, o))/len(o))-1):+.1f}%, worst {100*(max(o)-1):+.1f}%")
ks = [k for k in R["N"] if k[3] > 0 and k in R["R"]]
if ks:
    g = math.exp(sum(math.log(R["R"][k] / R["N"][k]) for k in ks) / len(ks))
    print(f"sparse R/N (>1: the carried word faster) geomean {g:.3f} over {len(ks)} points")
    for k in sorted(ks): print(f"   {k}: R {R['R'][k]:.2f}  N {R['N'][k]:.2f}")
PY
# Few tokens (M = 16 / 32: decode, multistage and cp.async warpgroup tiles today, +28..40 % over dense): the 64x64
# producer tile forced on the sparse layers (the dense layers refuse a sparse key and are skipped).
SV=(--variant "pipe=tma;tile=64x64x128;warps=1x4;stages=6;split=2;reduce=cluster;producer=wg;wu8=1;sparsity=0.1;rblock=64x64"
    --variant "pipe=tma;tile=64x64x128;warps=1x4;stages=6;split=4;producer=wg;wu8=1;sparsity=0.1;rblock=64x64")
QJIT_CACHE_DIR=/tmp/qf timeout 100 $Q bench --scheme w4a8-lqq --sparsity 0.1 --no-peers --shapes 4096x4096,12288x4096,4096x11008,8192x8192 --m 16,32 --reps 20 "${SV[@]}" --csv $O/few.csv > $O/few.txt 2>&1
echo "few rc=$? at $(( $(date +%s) - T0 )) s"
awk -F, 'NR > 1 { k = $1 "x" $2 " M=" $3; if ($15 == 0) d[k] = $17; else if ($12 == 0) s[k] = $17; else f[k] = f[k] " " $17 }
         END { for (k in d) printf "%s dense %s table-sparse %s forced%s\n", k, d[k], s[k], f[k] }' $O/few.csv | sort
TS=/tmp/tpl-st; python3 bench/stamps/instrument.py templates $TS/templates
for r in 0 0.01; do
  QJIT_CACHE_DIR=/tmp/qst QJIT_TEMPLATE_PATH=$TS/templates timeout 60 build-dev/qjit_stamps 4096 4096 64 - 24 $r > $O/st-$r.txt 2>&1
  python3 bench/stamps/phases.py $O/st-$r.txt | awk '/ launch /{p = / launch 22:/} p' > $O/ph-$r.txt; grep -E "gap tile 8->9|CTA duration" $O/ph-$r.txt
done
(cd build-dev && QJIT_TEST_PIPES="pipe=tma" QJIT_CACHE_DIR=/tmp/qt CK_RUN_CASE=sparse CK_DEFAULT_TIMEOUT=600 timeout 150 ./test_gpu > $O/gpu-sp.txt 2>&1; echo "rc=$?" >> $O/gpu-sp.txt) &
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
(cd build-dev && QJIT_TEST_PIPES="tile=64x64x128;warps=1x4;stages=8;split=2;pipe=tma;reduce=cluster;producer=wg,tile=128x64x128;warps=1x4;stages=6;pipe=tma;producer=wg;persist=1" \
   QJIT_CACHE_DIR=/tmp/qs CK_RUN_CASE=sparse CK_DEFAULT_TIMEOUT=600 timeout 150 $SAN --tool memcheck --error-exitcode 9 ./test_gpu > $O/san-memcheck.txt 2>&1; echo "memcheck rc=$?" > $O/san.txt) &
wait; cat $O/san.txt; echo "== gpu-sp: $(grep -E 'Checks' $O/gpu-sp.txt) $(tail -1 $O/gpu-sp.txt) exact $(grep -c 'acc exact' $O/gpu-sp.txt)"; grep -E ":F:|:E:" $O/gpu-sp.txt | head -3
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c1.tgz .
