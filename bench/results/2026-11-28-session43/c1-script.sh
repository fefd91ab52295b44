#!/bin/bash
# Session 43 call 1: where the sparse TMA kernels' cost at M >= 64 lies. qjit_stamps event times (L2 flushed,
# median of 20) of: D the dense table's kernel; S the sparse table's twin (rho 0.01 / 0.1, unweighted blocks);
# X the same sparse key from a tree whose lib/wgmma_tile.cu renders the dense steps only (no tile test, no fold:
# wrong sums; the producer still looks up and copies the residual); Ds the dense key at the sparse twin's stages.
# S - X: the MMA warps' residual code; X - Ds: the residual's traffic and the producer's lookups; Ds - D: the room.
T0=$(date +%s)
O=/tmp/o1; rm -rf $O; mkdir -p $O
cp .devdeps/s43c1.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli qjit_stamps > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
export QJIT_CACHE_DIR=/tmp/qc
timeout 420 python3 - $O $PWD <<'PY'
import subprocess, sys, os, statistics, re, time
O, root = sys.argv[1], sys.argv[2]
ST = root + "/build-dev/qjit_stamps"
XT = root + "/.devdeps/tpl/X/templates"
def run(n, k, m, var, rho, tpl=None):
    env = dict(os.environ)
    env["QJIT_TEMPLATE_PATH"] = tpl or (root + "/templates")
    r = subprocess.run([ST, str(n), str(k), str(m), var, "20", str(rho)], capture_output=True, text=True, env=env, timeout=90)
    key = None; t = []
    for l in r.stdout.splitlines():
        if l.startswith("variant "): key = l[8:]
        mm = re.match(r"rep (\d+) event ([\d.]+) us", l)
        if mm and int(mm.group(1)) >= 2: t.append(float(mm.group(2)))
    if r.returncode != 0: print("FAIL", n, k, m, var, rho, r.stderr[-300:], flush=True)
    return key, (statistics.median(t) if t else 0.0)
def stages(key): return re.search(r"stages=(\d+)", key).group(1)
pts = [(4096, 4096, m) for m in (64, 128, 256, 1024, 4096)] + [(12288, 4096, m) for m in (64, 128, 1024, 4096)] + [(8192, 8192, m) for m in (128, 1024)]
out = open(O + "/diag.txt", "w")
def p(*a):
    s = " ".join(str(x) for x in a); print(s, flush=True); out.write(s + "\n"); out.flush()
t0 = time.time()
for n, k, m in pts:
    kd, d = run(n, k, m, "-", 0.0)
    p(f"== {n}x{k} M={m} D {d:.2f}  {kd}")
    ds_done = {}
    for rho in (0.01, 0.1):
        ks, s = run(n, k, m, "-", rho)
        _, x = run(n, k, m, ks, rho, XT)
        st = stages(ks)
        if st not in ds_done:
            kds = re.sub(r"stages=\d+", "stages=" + st, kd) if kd else kd
            ds_done[st] = run(n, k, m, kds, 0.0)[1] if kds != kd else d
        dsv = ds_done[st]
        p(f"   rho {rho}: S {s:.2f} ({100*(s/d-1):+.1f}%)  X {x:.2f} ({100*(x/d-1):+.1f}%)  Ds {dsv:.2f} ({100*(dsv/d-1):+.1f}%)  S-X {s-x:+.2f}  X-Ds {x-dsv:+.2f}  Ds-D {dsv-d:+.2f}  {ks}")
    p(f"   [{time.time()-t0:.0f} s]")
PY
echo "diag rc=$? at $(( $(date +%s) - T0 )) s"
tar -C $O -czf $OUT/c1.tgz .
