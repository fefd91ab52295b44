#!/usr/bin/env python3
"""Issue-12/16 summary of table-a.csv + table-b.csv (8 Llama shapes, M <= 128):
per scheme and M, the geomean and worst speedup over the best cuBLAS path with
forward (activation kernel + GEMM) and with the tokens quantized before the
call (GEMM alone), the points lost, and w8a8 against cuBLAS INT8."""
import csv, math, sys
rows = []
for f in ("table-a.csv", "table-b.csv"):
    rows += [r for r in csv.DictReader(open(f)) if r["forced"] == "0" and float(r["sparsity"]) == 0]
def gm(v): return math.exp(sum(map(math.log, v)) / len(v))
print("| scheme | M | forward: x best cuBLAS (geomean, worst, lost of 8) | tokens in: x best cuBLAS (geomean, worst, lost) | tokens in: x FP8 | tok/forward time |")
print("|---|---|---|---|---|---|")
for s in ("w4a8-lqq", "w4a8-qoq", "w4a8-is", "w8a8"):
    for m in (1, 4, 16, 32, 64, 128):
        pts = [r for r in rows if r["scheme"] == s and int(r["M"]) == m]
        best = [min(float(r[c]) for c in ("cublas_bf16_us", "cublas_int8_us", "cublas_fp8_us") if float(r[c]) > 0) for r in pts]
        f = [b / float(r["qjit_us"]) for b, r in zip(best, pts)]
        t = [b / float(r["tokens_us"]) for b, r in zip(best, pts)]
        f8 = [float(r["cublas_fp8_us"]) / float(r["tokens_us"]) for r in pts]
        tr = [float(r["tokens_us"]) / float(r["qjit_us"]) for r in pts]
        print(f"| {s} | {m} | {gm(f):.2f}, {min(f):.2f}, {sum(x < 1 for x in f)} | {gm(t):.2f}, {min(t):.2f}, "
              f"{sum(x < 1 for x in t)} | {gm(f8):.2f} | {gm(tr):.3f} |")
print()
print("| w8a8 vs cuBLAS INT8 | M | forward (geomean, worst) | tokens in (geomean, worst) |")
print("|---|---|---|---|")
for m in (1, 4, 16, 32, 64, 128):
    pts = [r for r in rows if r["scheme"] == "w8a8" and int(r["M"]) == m]
    f = [float(r["cublas_int8_us"]) / float(r["qjit_us"]) for r in pts]
    t = [float(r["cublas_int8_us"]) / float(r["tokens_us"]) for r in pts]
    print(f"| | {m} | {gm(f):.3f}, {min(f):.3f} | {gm(t):.3f}, {min(t):.3f} |")
