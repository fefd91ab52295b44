#!/usr/bin/env python3
# bench/stamps/bisect.py STAMPS TREES [--rho R] [--reps N] [--stages S] NxKxM...: where a sparse layer's time goes,
# on the GPU.
# For each point: D, the dense layer's table kernel; S, the sparse layer's (rho R, blocks chosen on the unweighted
# error); then S's key from each diagnostic tree under TREES (bench/stamps/trees.py: TREES/NAME/templates, the
# names found there, in trees.py's order), and for Z2 and Z3, where the twin has fewer stages than the dense kernel, each
# at the dense kernel's stages (Z2d, Z3d); last D again (D2: the run-to-run spread to read the rest against). Each an
# event time of qjit_stamps (STAMPS: bench/stamps/harness.c built; the library's own templates for D and S),
# median of REPS launches after the first two, each after a write that flushes L2. Prints per point the times and
# their excess over D. --stages S: D, S and the trees each at the table key's tile with a ring of S stages (how the
# ring's lead changes each piece's cost).
import os, re, statistics, subprocess, sys

ORDER = ['W', 'X', 'Xr', 'Xw', 'X0', 'Xc', 'Xl', 'Xs', 'Xt', 'Y', 'Z', 'Z2', 'Z3', 'Z4']

def main(argv):
    args, rho, reps, nstages, points = [], 0.01, 20, None, []
    it = iter(argv)
    for a in it:
        if a == '--rho': rho = float(next(it))
        elif a == '--reps': reps = int(next(it))
        elif a == '--stages': nstages = int(next(it))
        else: args.append(a)
    if len(args) < 3:
        sys.exit('usage: bisect.py STAMPS TREES [--rho R] [--reps N] [--stages S] NxKxM...')
    stamps, trees = args[0], args[1]
    for p in args[2:]:
        m = re.fullmatch(r'(\d+)x(\d+)x(\d+)', p)
        if not m: sys.exit('bisect.py: %s is not NxKxM' % p)
        points.append(tuple(int(v) for v in m.groups()))
    names = [n for n in ORDER if os.path.isdir(os.path.join(trees, n, 'templates'))]
    cache = os.environ.get('QJIT_CACHE_DIR', '/tmp/qjit-bisect')

    def run(n, k, m, key, r, tree=None):
        env = dict(os.environ)
        if tree:
            env['QJIT_TEMPLATE_PATH'] = os.path.join(trees, tree, 'templates')
        env['QJIT_CACHE_DIR'] = cache + '-' + (tree or 'main')
        out = subprocess.run([stamps, str(n), str(k), str(m), key, str(reps + 2), str(r)], capture_output=True,
                             text=True, env=env, timeout=120)
        if out.returncode:
            print('   %s: failed: %s' % (tree or 'main', out.stderr.strip()[-200:]), flush=True)
            return None, 0.0
        got = re.search(r'^variant (\S+)', out.stdout, re.M)
        t = [float(v) for i, v in re.findall(r'^rep (\d+) event ([\d.]+) us', out.stdout, re.M) if int(i) >= 2]
        return (got.group(1) if got else None), (statistics.median(t) if t else 0.0)

    def stages(key): return re.search(r'stages=(\d+)', key).group(1)

    for n, k, m in points:
        kd, d = run(n, k, m, '-', 0.0)
        ks, s = run(n, k, m, '-', rho)
        if not kd or not ks:
            continue
        if nstages:
            kd, ks = (re.sub(r'stages=\d+', 'stages=%d' % nstages, v) for v in (kd, ks))
            d, s = run(n, k, m, kd, 0.0)[1], run(n, k, m, ks, rho)[1]
            if not d or not s:
                continue
        row = [('D', d), ('S', s)]
        for t in names:
            row.append((t, run(n, k, m, ks, rho, t)[1]))
            if t in ('Z2', 'Z3', 'Z4') and stages(ks) != stages(kd):
                row.append((t + 'd', run(n, k, m, re.sub(r'stages=\d+', 'stages=' + stages(kd), ks), rho, t)[1]))
        row.append(('D2', run(n, k, m, kd, 0.0)[1]))
        print('== %dx%d M=%d rho %g\n   dense  %s\n   sparse %s' % (n, k, m, rho, kd, ks))
        print('   ' + '  '.join('%s %.2f (%+.1f%%)' % (t, v, 100 * (v / d - 1) if d and v else 0.0) for t, v in row),
              flush=True)

if __name__ == '__main__':
    main(sys.argv[1:])
