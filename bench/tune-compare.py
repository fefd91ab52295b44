#!/usr/bin/env python3
"""Compares two `qjit bench --csv` runs of the same layers: the static
table's (first) against the tuned records' (second). Prints per layer and
M the two times and their ratio, the geomean, the worst point and whether
the tuned latency is non-decreasing in M within each layer (1 % noise).
Points where both run the same variant are marked '=' (their ratio is
timing noise); 'slower' counts the others more than 1 % slower."""
import csv
import math
import sys


def load(path):
    rows = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            if r["forced"] != "0" or float(r["qjit_us"]) <= 0:
                continue
            rows[(int(r["N"]), int(r["K"]), int(r["M"]))] = (float(r["qjit_us"]), r["variant"])
    return rows


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: tune-compare.py STATIC.csv TUNED.csv")
    before, after = load(sys.argv[1]), load(sys.argv[2])
    keys = sorted(set(before) & set(after))
    print(f"{'layer':>12} {'M':>6} {'table us':>10} {'tuned us':>10} {'speedup':>8}")
    logs, worst, slower, monotone = [], None, 0, True
    last = {}
    for n, k, m in keys:
        (s, vs), (t, vt) = before[(n, k, m)], after[(n, k, m)]
        r = s / t
        same = vs == vt
        logs.append(math.log(r))
        slower += r < 0.99 and not same
        if worst is None or r < worst[0]:
            worst = (r, n, k, m)
        prev = last.get((n, k))
        flag = ""
        if prev is not None and t < 0.99 * prev:
            monotone = False
            flag = "  (faster than the M before)"
        last[(n, k)] = t
        print(f"{n:>6}x{k:<5} {m:>6} {s:>10.2f} {t:>10.2f} {r:>7.3f}x {'=' if same else ' '}{flag}")
    g = math.exp(sum(logs) / len(logs))
    print(f"\n{len(keys)} points: geomean {g:.3f}x over the table; worst {worst[0]:.3f}x "
          f"({worst[1]}x{worst[2]} M={worst[3]}); {slower} of another variant > 1 % slower than the table; "
          f"latency {'non-decreasing' if monotone else 'NOT non-decreasing'} in M within each layer")


if __name__ == "__main__":
    main()
