#!/bin/bash
# Session 44 call 4 (issue 14). Call 3: an L2 prefetch per 512-byte block made the sparse kernels 3..15 % slower, its
# lookup without the instruction cost nothing (B = old); copies of every block from one hot L2 block (Xl) cost
# nearly what real copies do (X): a bulk copy's cost is the copy op itself, not DRAM. Now (new): the TMA pipe's room
# keeps a kept residual block's 16x64 blocks together in rweight's order, and one bulk copy per residual block part
# (64x64 blocks: 4x fewer copies). Predicted: S over D at rho 0.01 down by ~3/4 of Xl - Xc (1..3 points), more at
# rho 0.1. (1) stamps old/new/D; if new/old < 0.995: (2) exactness on the TMA pipes (sparse case), (3) qjit bench.
T0=$(date +%s)
O=/tmp/o4; rm -rf $O; mkdir -p $O
cp .devdeps/s44c4.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli qjit_stamps test_gpu > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
export OLD=$PWD/.devdeps/tpl/M/templates NEW=$PWD/templates
timeout 200 python3 - $O $PWD <<'PY'
import subprocess, sys, os, statistics, re, math
O, root = sys.argv[1], sys.argv[2]
ST = root + "/build-dev/qjit_stamps"
T = {'old': os.environ['OLD'], 'new': os.environ['NEW']}
def run(n, k, m, var, rho, t):
    env = dict(os.environ); env["QJIT_TEMPLATE_PATH"] = T[t]; env["QJIT_CACHE_DIR"] = "/tmp/qc-" + t
    r = subprocess.run([ST, str(n), str(k), str(m), var, "20", str(rho)], capture_output=True, text=True, env=env, timeout=60)
    t_ = [float(v) for i, v in re.findall(r"^rep (\d+) event ([\d.]+) us", r.stdout, re.M) if int(i) >= 2]
    if r.returncode: print("FAIL", t, r.stderr[-200:])
    return statistics.median(t_) if t_ else 0.0
out = open(O + "/ab.txt", "w"); ratios = []
for n, k, m in [(12288, 4096, 128), (4096, 4096, 64), (12288, 4096, 64), (8192, 8192, 128), (4096, 4096, 256), (4096, 11008, 128)]:
    for rho in (0.01, 0.1):
        d = run(n, k, m, "-", 0.0, 'new'); so = run(n, k, m, "-", rho, 'old'); sn = run(n, k, m, "-", rho, 'new')
        so2 = run(n, k, m, "-", rho, 'old'); sn2 = run(n, k, m, "-", rho, 'new')
        a, b = min(so, so2), min(sn, sn2)
        ratios.append(b / a)
        s = f"{n}x{k} M={m} rho {rho}: D {d:.2f}  old {so:.2f}/{so2:.2f} ({100*(a/d-1):+.1f}%)  new {sn:.2f}/{sn2:.2f} ({100*(b/d-1):+.1f}%)  new/old {b/a:.3f}"
        print(s, flush=True); out.write(s + "\n")
g = math.exp(sum(map(math.log, ratios)) / len(ratios)); print(f"new/old geomean {g:.3f}"); out.write(f"new/old geomean {g:.3f}\n")
open(O + "/go", "w").write("1" if g < 0.995 else "0")
PY
echo "stamps at $(( $(date +%s) - T0 )) s"
if [ "$(cat $O/go 2>/dev/null)" = 1 ]; then
(cd build-dev && QJIT_CACHE_DIR=/tmp/qt QJIT_TEST_PIPES="pipe=tma" CK_RUN_CASE=sparse CK_DEFAULT_TIMEOUT=60 timeout 200 ./test_gpu > $O/gpu-sp.txt 2>&1; echo "rc=$?" >> $O/gpu-sp.txt)
echo "== gpu-sp: $(grep -E '^[0-9]+%: Checks' $O/gpu-sp.txt) $(tail -1 $O/gpu-sp.txt) exact $(grep -c 'acc exact' $O/gpu-sp.txt) at $(( $(date +%s) - T0 )) s"; grep -E ":F:|:E:" $O/gpu-sp.txt | head -5
Q=$PWD/build-dev/qjit
for t in new old; do
  TP=$NEW; [ $t = old ] && TP=$OLD
  QJIT_TEMPLATE_PATH=$TP QJIT_CACHE_DIR=/tmp/qB-$t timeout 100 $Q bench --scheme w4a8-lqq --sparsity 0.05,0.1 --no-peers --shapes 4096x4096,12288x4096,4096x11008,8192x8192 --m 16,64,128,256,1024 --reps 10 --csv $O/bench-$t.csv > $O/bench-$t.txt 2>&1
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
fi
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c4.tgz .
