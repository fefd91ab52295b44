#!/bin/bash
# Session 44 call 2 (issue 14): the residual warp asks L2 for each lane's block STAGES K tiles ahead of its copy
# (cp.async.bulk.prefetch.L2, found in the cursor's words: no load of its own). Call 1: copies cost 2.5..7.6 points
# at rho 0.01 (trees X against Xc) -- their DRAM latency exposed where a tile carries a block. Predicted: S over D at
# rho 0.01 down by most of that (12288x4096 M=128 +12.8 -> ~+6, 12288x4096 M=64 +14 -> ~+9), rho 0.1 likewise.
# (1) exactness on the producer pipes (sparse case); (2) stamps A/B old (tpl/M = HEAD) / new / dense;
# (3) qjit bench old and new on 4 shapes x M = 16..1024 at rho 0.05 / 0.1.
T0=$(date +%s)
O=/tmp/o2; rm -rf $O; mkdir -p $O
cp .devdeps/s44c2.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli qjit_stamps test_gpu > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
(cd build-dev && QJIT_CACHE_DIR=/tmp/qt QJIT_TEST_PIPES="producer=wg" CK_RUN_CASE=sparse CK_DEFAULT_TIMEOUT=60 timeout 150 ./test_gpu > $O/gpu-sp.txt 2>&1; echo "rc=$?" >> $O/gpu-sp.txt)
echo "== gpu-sp: $(grep -E '^[0-9]+%: Checks' $O/gpu-sp.txt) $(tail -1 $O/gpu-sp.txt) exact $(grep -c 'acc exact' $O/gpu-sp.txt) at $(( $(date +%s) - T0 )) s"; grep -E ":F:|:E:" $O/gpu-sp.txt | head -5
export OLD=$PWD/.devdeps/tpl/M/templates
timeout 150 python3 - $O $PWD <<'PY'
import subprocess, sys, os, statistics, re
O, root = sys.argv[1], sys.argv[2]
ST = root + "/build-dev/qjit_stamps"
def run(n, k, m, var, rho, tpl):
    env = dict(os.environ); env["QJIT_TEMPLATE_PATH"] = tpl; env["QJIT_CACHE_DIR"] = "/tmp/qa-" + str(hash(tpl) % 1000)
    r = subprocess.run([ST, str(n), str(k), str(m), var, "20", str(rho)], capture_output=True, text=True, env=env, timeout=60)
    t = [float(v) for i, v in re.findall(r"^rep (\d+) event ([\d.]+) us", r.stdout, re.M) if int(i) >= 2]
    if r.returncode: print("FAIL", r.stderr[-200:])
    return statistics.median(t) if t else 0.0
out = open(O + "/ab.txt", "w")
for n, k, m in [(12288, 4096, 128), (4096, 4096, 64), (4096, 4096, 256), (12288, 4096, 64), (8192, 8192, 128), (4096, 4096, 1024), (8192, 8192, 1024)]:
    for rho in (0.01, 0.1):
        d = run(n, k, m, "-", 0.0, root + "/templates")
        so = run(n, k, m, "-", rho, os.environ["OLD"])
        sn = run(n, k, m, "-", rho, root + "/templates")
        s = f"{n}x{k} M={m} rho {rho}: D {d:.2f}  old {so:.2f} ({100*(so/d-1):+.1f}%)  new {sn:.2f} ({100*(sn/d-1):+.1f}%)  new/old {sn/so:.3f}"
        print(s, flush=True); out.write(s + "\n")
PY
echo "stamps at $(( $(date +%s) - T0 )) s"
Q=$PWD/build-dev/qjit
for t in new old; do
  TP=$PWD/templates; [ $t = old ] && TP=$OLD
  QJIT_TEMPLATE_PATH=$TP QJIT_CACHE_DIR=/tmp/qB-$t timeout 140 $Q bench --scheme w4a8-lqq --sparsity 0.05,0.1 --no-peers --shapes 4096x4096,12288x4096,4096x11008,8192x8192 --m 16,64,128,256,1024 --reps 10 --csv $O/bench-$t.csv > $O/bench-$t.txt 2>&1
  echo "bench $t rc=$? at $(( $(date +%s) - T0 )) s"
done
python3 - $O <<'PY'
import csv, sys, math, os
for t in ("old", "new"):
    d = {}
    p = f"{sys.argv[1]}/bench-{t}.csv"
    if not os.path.exists(p): print(t, "missing"); continue
    for x in csv.DictReader(open(p)):
        d[(int(x["N"]), int(x["K"]), int(x["M"]), float(x["sparsity"]))] = float(x["tokens_us"])
    for rho in (0.05, 0.1):
        o = [d[k] / d[(k[0], k[1], k[2], 0.0)] for k in d if k[3] == rho and d.get((k[0], k[1], k[2], 0.0), 0) > 0 and d[k] > 0]
        if o: print(f"{t} rho={rho}: {len(o)} points geomean {100*(math.exp(sum(map(math.log, o))/len(o))-1):+.1f}%, worst {100*(max(o)-1):+.1f}%")
        print("   ", " ".join(f"{k[0]}x{k[1]}/{k[2]} {100*(d[k]/d[(k[0],k[1],k[2],0.0)]-1):+.1f}" for k in sorted(d) if k[3] == rho))
PY
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c2.tgz .
