#!/usr/bin/env python3
# bench/stamps/phases.py FILE...: the phases of each launch that bench/stamps/harness.c printed the stamps of
# (QS / QT lines: one pair a CTA), in ns across the CTAs (min, median, p90, max): the CTAs' start and end from
# the first CTA's start (globaltimer), and from each CTA's own start (its clock64 stamps, converted at the
# CTA's own cycles per ns) its barriers set up, its main loop's start, its K tiles landing and the gaps between
# them, the main loop drained, the split-K fix-up and the epilogue.
import sys, collections, statistics as st
A = {}; B = {}
for f in sys.argv[1:]:
    for line in open(f, errors='replace'):
        t = line.split()
        if len(t) < 4: continue
        if t[0] == 'QS':
            cfg, l, i = t[1], int(t[2]), int(t[3])
            g0, g1 = int(t[7]), int(t[8]); s = [int(x) for x in t[10:18]]
            A[(f, cfg, l, i)] = (g0, g1, s, (int(t[4]), int(t[5]), int(t[6])))
        elif t[0] == 'QT':
            cfg, l, i = t[1], int(t[2]), int(t[3])
            B[(f, cfg, l, i)] = [int(x) for x in t[5:29]]
runs = collections.defaultdict(list)
for k in A:
    if k in B: runs[k[:3]].append(k[3])
def q(v, p): v = sorted(v); return v[min(len(v) - 1, int(p * (len(v) - 1) + 0.5))]
for (f, cfg, l) in sorted(runs):
    rows = []
    for i in runs[(f, cfg, l)]:
        g0, g1, s, grid = A[(f, cfg, l, i)]; b = B[(f, cfg, l, i)]
        s = s + b   # 32 stamps, 31 the CTA's end
        ns = g1 - g0
        cpn = (s[31] - s[0]) / ns if ns > 0 else 1.8
        rows.append((g0, g1, s, cpn, grid))
    gmin = min(r[0] for r in rows)
    rows = [(r[0] - gmin, r[1] - gmin) + r[2:] for r in rows]
    cpn = st.median(r[3] for r in rows)
    grid = rows[0][4]
    nkt = len([k for k in range(24) if all(r[2][3 + k] > 0 for r in rows)])
    print(f"{f} grid {grid} launch {l}: {len(rows)} CTAs, {cpn:.2f} cycles/ns, {nkt} K tiles")
    def ph(name, vals):
        print(f"   {name:42s} min {min(vals):7.0f}  med {st.median(vals):7.0f}  p90 {q(vals, .9):7.0f}  max {max(vals):7.0f} ns")
    ph("CTA start (from the first CTA's)", [r[0] for r in rows])
    ph("CTA end (from the first CTA's start)", [r[1] for r in rows])
    c = lambda r, i: r[2][i] / cpn
    ph("barrier init done", [c(r, 1) for r in rows])
    ph("main loop start (PDL wait, prologue)", [c(r, 2) for r in rows])
    ph("K tile 0 landed (from CTA start)", [c(r, 3) for r in rows])
    if nkt > 1:
        ph(f"K tile {nkt-1} landed", [c(r, 3 + nkt - 1) for r in rows])
        for k in (1, 2, 4, 7, 8, 9, 12, nkt - 1):
            if 0 < k < nkt: ph(f"  gap tile {k-1}->{k}", [c(r, 3 + k) - c(r, 2 + k) for r in rows])
    ph("main loop drained", [c(r, 27) for r in rows])
    ph("  last tile landed -> drained", [c(r, 27) - c(r, 3 + nkt - 1) for r in rows])
    ph("split-K fix-up (28->29)", [c(r, 29) - c(r, 28) for r in rows if r[2][29] > 0] or [0])
    ph("epilogue to end (29->end)", [c(r, 31) - c(r, 29) for r in rows if r[2][29] > 0] or [0])
    ph("CTA duration", [c(r, 31) for r in rows])
