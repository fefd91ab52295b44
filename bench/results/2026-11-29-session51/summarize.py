#!/usr/bin/env python3
# summarize.py: the tables of this folder's README from its CSVs (run in the folder).
import csv, re, math, collections, glob, os
def tag(r):
    v = r['variant']
    f = lambda k: re.search(k + r'=(\w+)', v).group(1)
    return ('table ' if r['forced'] == '0' else '      ') + f('pipe')[:5] + ' ' + f('tile') + ' s' + f('split') + ' st' + f('stages')
def table(files, ms):
    d = collections.OrderedDict()
    for fn in files:
        for r in csv.DictReader(open(fn)):
            key = (r.get('scheme', ''), int(r['N']), int(r['K']), float(r.get('sparsity') or 0))
            d.setdefault(key, collections.OrderedDict()).setdefault(tag(r), {})[r['M']] = float(r['tokens_us'])
    for k, t in d.items():
        best = {m: min(x.get(m, 1e9) for x in t.values()) for m in ms}
        print('%s %dx%d rho %g' % k)
        for tg, x in t.items():
            print('  %-34s' % tg, ' '.join(('%7.2f%s' % (x[m], '*' if x[m] == best[m] else ' ')) if m in x else ' ' * 8 for m in ms))
print('## c1: forced 16-token tiles (dense LQQ / IS, sparse LQQ rho 0.05), us at M = 1 / 8 / 16; * best')
table(['c1-few-w4a8-lqq.csv', 'c1-few-w4a8-is.csv', 'c1-sparse-m16.csv'], ('1', '8', '16'))
print('\n## c2: the sweep (dense LQQ), us at M = 1 / 8 / 16')
table(['c2-sweep.csv', 'c2-decode.csv'], ('1', '8', '16'))
print('\n## c3: table against table (old = the last commit, new = call 3\'s table), best of two runs each')
R = {t: {(int(x['N']), int(x['K']), int(x['M'])): (float(x['tokens_us']), x['variant']) for x in csv.DictReader(open('c3-bench-%s.csv' % t))}
     for t in ('old', 'new', 'old2', 'new2')}
def short(v):
    f = lambda k: re.search(k + r'=(\w+)', v).group(1)
    return f('pipe')[:5] + ' s' + f('split') + ' st' + f('stages')
rs = []
for k in sorted(R['old']):
    o = min(R['old'][k][0], R['old2'][k][0]); n = min(R['new'][k][0], R['new2'][k][0]); rs.append(n / o)
    ch = '' if R['old'][k][1] == R['new'][k][1] else '%s -> %s' % (short(R['old'][k][1]), short(R['new'][k][1]))
    print('  %5dx%-5d M=%-3d %7.2f %7.2f %.3f %s' % (k[0], k[1], k[2], o, n, n / o, ch))
print('  geomean new/old %.3f over %d points' % (math.exp(sum(map(math.log, rs)) / len(rs)), len(rs)))
