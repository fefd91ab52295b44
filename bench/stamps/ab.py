#!/usr/bin/env python3
# bench/stamps/ab.py STAMPS OLD NEW [--rho R,...] [--reps N] NxKxM...: two template trees' sparse kernels against
# each other on the GPU. For each point and budget: D, the dense layer's table kernel (NEW's templates); then the
# sparse layer's table kernel (blocks chosen on the unweighted error) from OLD and from NEW, each twice, alternating,
# the better of each pair kept. Each an event time of qjit_stamps (STAMPS: bench/stamps/harness.c built), median of
# REPS launches after the first two, each after a write that flushes L2. Prints per point the times, their excess
# over D and NEW/OLD, then the geomean of NEW/OLD. OLD and NEW are template folders (QJIT_TEMPLATE_PATH), e.g. a
# `git archive main templates` unpacked beside the working tree's templates.
import math, os, re, statistics, subprocess, sys

def main(argv):
    args, rhos, reps, points = [], [0.01, 0.1], 20, []
    it = iter(argv)
    for a in it:
        if a == '--rho': rhos = [float(v) for v in next(it).split(',')]
        elif a == '--reps': reps = int(next(it))
        else: args.append(a)
    if len(args) < 4:
        sys.exit('usage: ab.py STAMPS OLD NEW [--rho R,...] [--reps N] NxKxM...')
    stamps, trees = args[0], {'old': args[1], 'new': args[2]}
    for p in args[3:]:
        m = re.fullmatch(r'(\d+)x(\d+)x(\d+)', p)
        if not m: sys.exit('ab.py: %s is not NxKxM' % p)
        points.append(tuple(int(v) for v in m.groups()))
    cache = os.environ.get('QJIT_CACHE_DIR', '/tmp/qjit-ab')

    def run(n, k, m, r, tree):
        env = dict(os.environ)
        env['QJIT_TEMPLATE_PATH'] = trees[tree]
        env['QJIT_CACHE_DIR'] = cache + '-' + tree
        out = subprocess.run([stamps, str(n), str(k), str(m), '-', str(reps + 2), str(r)], capture_output=True,
                             text=True, env=env, timeout=120)
        if out.returncode:
            print('   %s: failed: %s' % (tree, out.stderr.strip()[-200:]), flush=True)
            return 0.0
        t = [float(v) for i, v in re.findall(r'^rep (\d+) event ([\d.]+) us', out.stdout, re.M) if int(i) >= 2]
        return statistics.median(t) if t else 0.0

    ratios = []
    for n, k, m in points:
        for r in rhos:
            d = run(n, k, m, 0.0, 'new')
            o1, n1, o2, n2 = run(n, k, m, r, 'old'), run(n, k, m, r, 'new'), run(n, k, m, r, 'old'), run(n, k, m, r, 'new')
            o, w = min(o1, o2), min(n1, n2)
            if not (d and o and w):
                continue
            ratios.append(w / o)
            print('%dx%d M=%d rho %g: D %.2f  old %.2f/%.2f (%+.1f%%)  new %.2f/%.2f (%+.1f%%)  new/old %.3f'
                  % (n, k, m, r, d, o1, o2, 100 * (o / d - 1), n1, n2, 100 * (w / d - 1), w / o), flush=True)
    if ratios:
        print('new/old geomean %.3f over %d' % (math.exp(sum(map(math.log, ratios)) / len(ratios)), len(ratios)))

if __name__ == '__main__':
    main(sys.argv[1:])
