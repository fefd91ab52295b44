#!/usr/bin/env python3
# bench/bench-ab.py DIR: two template trees' `qjit bench` runs against each other. DIR holds bench-old.csv,
# bench-new.csv, bench-old2.csv and bench-new2.csv (old/new/old/new alternating, `qjit bench --csv`, dense and
# sparse layers of one scheme). Prints, for each tree, the sparse layers' excess over the dense layer of the same
# run pair (best of two each, geomean and worst per budget, every point), then sparse new/old and dense new/old
# (geomean, min, max over the points in all four files).
import csv, sys, math, os
def rd(t):
    p = f"{sys.argv[1]}/bench-{t}.csv"
    return {(int(x["N"]), int(x["K"]), int(x["M"]), float(x["sparsity"])): (float(x["tokens_us"]), x["variant"]) for x in csv.DictReader(open(p))} if os.path.exists(p) else {}
R = {t: rd(t) for t in ("old", "new", "old2", "new2")}
missing = [t for t in R if not R[t]]
if missing:
    sys.exit("bench-ab.py: no rows in %s" % ", ".join(f"{sys.argv[1]}/bench-{t}.csv" for t in missing))
g = lambda v: math.exp(sum(map(math.log, v)) / len(v))
for t in ("old", "new"):
    a, b = R[t], R[t + "2"]
    for rho in (0.05, 0.1):
        o = []
        for k in a:
            if k[3] != rho or k not in b: continue
            d = (k[0], k[1], k[2], 0.0)
            s = min(a[k][0], b[k][0]); dd = min(a[d][0], b[d][0])
            o.append((k, s / dd))
        print(f"{t} rho={rho}: {len(o)} points geomean {100*(g([x[1] for x in o])-1):+.1f}%, worst {100*(max(x[1] for x in o)-1):+.1f}%")
        print("   ", " ".join(f"{k[0]}x{k[1]}/{k[2]} {100*(v-1):+.1f}" for k, v in sorted(o)))
for rho in (0.05, 0.1):
    r = [min(R["new"][k][0], R["new2"][k][0]) / min(R["old"][k][0], R["old2"][k][0]) for k in R["old"] if k[3] == rho and k in R["new"] and k in R["old2"] and k in R["new2"]]
    print(f"sparse new/old rho={rho}: geomean {g(r):.3f} over {len(r)}, min {min(r):.3f} max {max(r):.3f}")
d = [min(R["new"][k][0], R["new2"][k][0]) / min(R["old"][k][0], R["old2"][k][0]) for k in R["old"] if k[3] == 0.0 and k in R["new"] and k in R["old2"] and k in R["new2"]]
print(f"dense new/old (the same kernels): geomean {g(d):.3f} over {len(d)}, min {min(d):.3f} max {max(d):.3f}")
