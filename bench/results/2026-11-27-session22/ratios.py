#!/usr/bin/env python3
"""Time ratios of the issue-15 table from qjit bench CSVs (dense, dispatch-table rows):
per M the geomean over shapes and the worst shape, for each pair (a / b: a's time over b's)."""
import csv, math, sys
PAIRS = [("w4a4", "w4a8-lqq"), ("w4ax-s", "w4a4"), ("w4ax", "w4a4")]
t = {}
for path in sys.argv[1:]:
    for r in csv.DictReader(open(path)):
        if r["forced"] == "0" and float(r["sparsity"]) == 0:
            t[(r["scheme"], int(r["N"]), int(r["K"]), int(r["M"]))] = float(r["qjit_us"])
shapes = sorted({(n, k) for _, n, k, _ in t})
ms = sorted({m for *_, m in t})
print("| M | " + " | ".join(f"{a} / {b} (worst; points > 1)" for a, b in PAIRS) + " |")
print("| --- |" + " --- |" * len(PAIRS))
allr = {p: [] for p in PAIRS}
for m in ms:
    cells = []
    for a, b in PAIRS:
        rs = [t[(a, n, k, m)] / t[(b, n, k, m)] for n, k in shapes if (a, n, k, m) in t and (b, n, k, m) in t]
        allr[(a, b)] += rs
        g = math.exp(sum(map(math.log, rs)) / len(rs))
        cells.append(f"{g:.3f} ({max(rs):.3f}; {sum(r > 1 for r in rs)})")
    print(f"| {m} | " + " | ".join(cells) + " |")
cells = []
for p in PAIRS:
    rs = allr[p]
    cells.append(f"{math.exp(sum(map(math.log, rs)) / len(rs)):.3f} ({max(rs):.3f}; {sum(r > 1 for r in rs)})")
print("| all | " + " | ".join(cells) + " |")
print(f"\n{len(shapes)} shapes: " + ", ".join(f"{n}x{k}" for n, k in shapes))
for a, b in PAIRS[1:2]:
    worst = sorted(((t[(a, n, k, m)] / t[(b, n, k, m)], n, k, m) for n, k in shapes for m in ms), reverse=True)[:6]
    print(f"worst {a} / {b}: " + "; ".join(f"{n}x{k} M={m} {r:.3f}" for r, n, k, m in worst))
