#!/usr/bin/env python3
# grid-summary.py A.csv [B.csv ...] [--ref OLD1.csv,OLD2.csv]: per point and per band, sparse tokens_us over the
# dense kernel's in the same run (qjit bench --sparsity 0.05,0.1 --csv); with --ref, the same for an older grid
# beside it.
import csv, math, sys
def load(paths):
    d = {}
    for p in paths:
        for r in csv.DictReader(open(p)):
            if r['forced'] != '0':
                continue
            d[(int(r['N']), int(r['K']), int(r['M']), float(r['sparsity']))] = (float(r['tokens_us']), r['variant'])
    return d
def over(d):
    o = {}
    for (n, k, m, s), (t, v) in d.items():
        if s > 0 and (n, k, m, 0.0) in d:
            o[(n, k, m, s)] = t / d[(n, k, m, 0.0)][0]
    return o
def gm(xs): return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float('nan')
args = [a for a in sys.argv[1:] if not a.startswith('--ref')]
ref = [a.split('=', 1)[1].split(',') for a in sys.argv[1:] if a.startswith('--ref=')]
new = load(args); o = over(new); r = over(load(ref[0])) if ref else {}
bands = [('M <= 16', lambda m: m <= 16), ('M = 32..128', lambda m: 32 <= m <= 128), ('M = 256..1024', lambda m: 256 <= m <= 1024),
         ('M = 4096', lambda m: m == 4096)]
for rho in (0.05, 0.1):
    pts = {k: v for k, v in o.items() if k[3] == rho}
    line = 'rho %g: %d points geomean %+.1f %%' % (rho, len(pts), (gm(pts.values()) - 1) * 100)
    for name, f in bands:
        line += ', %s %+.1f' % (name, (gm([v for k, v in pts.items() if f(k[2])]) - 1) * 100)
    w = max(pts, key=pts.get)
    line += '; worst %+.1f (%dx%d M=%d); %d over +10 %%' % ((pts[w] - 1) * 100, w[0], w[1], w[2], sum(v > 1.10 for v in pts.values()))
    if r:
        rp = {k: v for k, v in r.items() if k[3] == rho and k in pts}
        line += ' | ref %+.1f %% on the same %d points' % ((gm(rp.values()) - 1) * 100, len(rp))
    print(line)
print('N K M dense_us rho0.05 rho0.1 (ref rho0.05 rho0.1) sparse kernel (rho 0.1)')
for (n, k, m, s) in sorted(x for x in new if x[3] == 0.0):
    a, b = o.get((n, k, m, 0.05)), o.get((n, k, m, 0.1))
    if a is None or b is None:
        continue
    v = new[(n, k, m, 0.1)][1]
    short = ' '.join(f for f in v.split(';') if f.split('=')[0] in ('pipe', 'tile', 'stages', 'persist', 'rpieces', 'split'))
    rs = ' (%+.1f %+.1f)' % ((r[(n, k, m, 0.05)] - 1) * 100, (r[(n, k, m, 0.1)] - 1) * 100) if (n, k, m, 0.1) in r else ''
    print('%d %d %d %.2f %+.1f%% %+.1f%%%s %s' % (n, k, m, new[(n, k, m, 0.0)][0], (a - 1) * 100, (b - 1) * 100, rs, short))
