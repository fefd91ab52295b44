#!/bin/bash
# Session 44 call 3 (issue 14). Call 2: the L2 prefetch a ring's length ahead made the sparse kernels 3..21 % slower
# (read: its select of the cursor's two entries waited on the entry just requested ahead, ~1 us of the residual warp
# per word change). Now A: the prefetch after the tile's lookup, from the cursor's current word only; B: A without the
# prefetch instruction (its lookup kept); old: HEAD. And from HEAD's templates the trees X, Xc, Xl (copies from one
# hot block): X - Xl the copies' DRAM latency, Xl - Xc their own cost. Predicted: B ~ old, A below old by what X - Xl
# shows (if X - Xl is small, the prefetch cannot help and A ~ B). If A/old < 0.985 over the points, qjit bench A/old.
T0=$(date +%s)
O=/tmp/o3; rm -rf $O; mkdir -p $O
cp .devdeps/s44c3.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli qjit_stamps > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
rm -rf /tmp/tr; python3 bench/stamps/trees.py .devdeps/tpl/M/templates /tmp/tr X Xc Xl > /dev/null || exit 1
mkdir -p /tmp/tr/B && cp -r templates /tmp/tr/B/ && python3 - <<'PY' || exit 1
p = '/tmp/tr/B/templates/lib/residual.cu'; s = open(p).read()
old = 'asm volatile("cp.async.bulk.prefetch.L2.global [%0], 512;\\n" :: "l"(p) : "memory");'
assert s.count(old) == 1; open(p, 'w').write(s.replace(old, 'asm volatile("" :: "l"(p) : "memory");'))
PY
export OLD=$PWD/.devdeps/tpl/M/templates NEW=$PWD/templates
timeout 330 python3 - $O $PWD <<'PY'
import subprocess, sys, os, statistics, re, math
O, root = sys.argv[1], sys.argv[2]
ST = root + "/build-dev/qjit_stamps"
T = {'old': os.environ['OLD'], 'A': os.environ['NEW'], 'B': '/tmp/tr/B/templates', 'X': '/tmp/tr/X/templates', 'Xc': '/tmp/tr/Xc/templates', 'Xl': '/tmp/tr/Xl/templates'}
def run(n, k, m, var, rho, t):
    env = dict(os.environ); env["QJIT_TEMPLATE_PATH"] = T[t]; env["QJIT_CACHE_DIR"] = "/tmp/qc-" + t
    r = subprocess.run([ST, str(n), str(k), str(m), var, "20", str(rho)], capture_output=True, text=True, env=env, timeout=60)
    key = re.search(r"^variant (\S+)", r.stdout, re.M)
    t_ = [float(v) for i, v in re.findall(r"^rep (\d+) event ([\d.]+) us", r.stdout, re.M) if int(i) >= 2]
    if r.returncode: print("FAIL", t, r.stderr[-200:])
    return (key.group(1) if key else None), (statistics.median(t_) if t_ else 0.0)
out = open(O + "/ab.txt", "w"); ratios = []
for n, k, m in [(12288, 4096, 128), (4096, 4096, 64), (12288, 4096, 64), (8192, 8192, 128), (4096, 4096, 256), (8192, 8192, 1024)]:
    for rho in (0.01, 0.1):
        _, d = run(n, k, m, "-", 0.0, 'A')
        ks, so = run(n, k, m, "-", rho, 'old')
        v = {'old': so}
        for t in ('A', 'B') + (('X', 'Xc', 'Xl') if rho == 0.01 and 'persist' not in ks else ()):
            v[t] = run(n, k, m, ks if t[0] == 'X' else "-", rho, t)[1]
        _, d2 = run(n, k, m, "-", 0.0, 'A')
        ratios.append(v['A'] / so)
        s = f"{n}x{k} M={m} rho {rho}: D {d:.2f} D2 {d2:.2f} " + "  ".join(f"{t} {x:.2f} ({100*(x/d-1):+.1f}%)" for t, x in v.items()) + f"  A/old {v['A']/so:.3f}"
        print(s, flush=True); out.write(s + "\n")
g = math.exp(sum(map(math.log, ratios)) / len(ratios)); print(f"A/old geomean {g:.3f}"); out.write(f"A/old geomean {g:.3f}\n")
open(O + "/go", "w").write("1" if g < 0.985 else "0")
PY
echo "stamps at $(( $(date +%s) - T0 )) s"
if [ "$(cat $O/go 2>/dev/null)" = 1 ]; then
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
tar -C $O -czf $OUT/c3.tgz .
