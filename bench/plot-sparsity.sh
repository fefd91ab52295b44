#!/usr/bin/env bash
# The sparsity budget's curves (issue 14), from either CSV:
#   a `qjit quant-error --sparsity ... --csv` file: output error and the
#     weights' share of it against the budget, per scheme and group;
#   a `qjit bench --sparsity ... --csv` file: latency over the dense layer
#     (same shape, M and variant) against the budget, geomean over the
#     shapes per M and over every point.
# Needs gnuplot and awk.   bench/plot-sparsity.sh FILE.csv [OUT.png]
set -euo pipefail
csv=${1:?usage: bench/plot-sparsity.sh FILE.csv [OUT.png]}
out=${2:-${csv%.csv}.png}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
head=$(head -1 "$csv")
if [[ $head == scheme,group,bits_per_weight* ]]; then
  # quant-error: columns scheme 1, group 2, rel_error 5, sparsity 13, weight_error 15.
  awk -F, -v dir="$tmp" 'NR > 1 && $1 != "activations-only" {
      name = $1 " g=" ($2 == 0 ? "per-ch" : $2); gsub(/[^A-Za-z0-9=. -]/, "_", name)
      print $13, 100 * $5, 100 * $15 > (dir "/" name ".dat") }
    NR > 1 && $1 == "activations-only" { floor = 100 * $5 }
    END { printf "%.2f\n", floor > (dir "/floor") }' "$csv"
  floor=$(cat "$tmp/floor")
  {
    echo "set terminal pngcairo size 1200,460 font ',9' noenhanced"
    echo "set output '$out'"
    echo "set grid; set key top right font ',8'; set xlabel 'sparsity budget rho'; set logscale x"
    echo "set xrange [0.008:1.2]"
    echo "set multiplot layout 1,2 title 'output error vs budget — $(basename "$(dirname "$csv")") (rho = 0 drawn at 0.01 - eps)'"
    for col in 2 3; do
      [[ $col == 2 ]] && echo "set title 'output error vs FP64 (INT8 activations alone: ${floor} %)'; set ylabel '% rel. error'" \
                      || echo "set title 'weights share: ||Y - Y_act|| / ||Y_ref||'; set ylabel '% rel. error'"
      echo -n "plot "
      first=1
      for f in "$tmp"/*.dat; do
        [[ $first == 1 ]] || echo -n ", "
        first=0
        echo -n "'$f' using (\$1 > 0 ? \$1 : 0.009):$col with linespoints lw 2 title '$(basename "$f" .dat)'"
      done
      [[ $col == 2 ]] && echo ", $floor with lines dt 2 lc rgb 'gray' title 'INT8 activations alone'" || echo
    done
    echo "unset multiplot"
  } | gnuplot
elif [[ $head == N,K,M,qjit_us* ]]; then
  # bench: N 1, K 2, M 3, qjit_us 4, variant 11, forced 12, scheme 13, sparsity 15.
  awk -F, -v dir="$tmp" 'NR > 1 && $4 > 0 {
      key = $13 SUBSEP $1 SUBSEP $2 SUBSEP $3 SUBSEP $12
      if ($15 == 0) dense[key] = $4; else { n++; k[n] = key; r[n] = $15; us[n] = $4; m[n] = $3; s[n] = $13 } }
    END {
      for (i = 1; i <= n; i++) if (dense[k[i]] > 0) {
        g = s[i] SUBSEP r[i]; lr = log(us[i] / dense[k[i]])
        all[g] += lr; cnt[g]++; gm[g SUBSEP m[i]] += lr; cm[g SUBSEP m[i]]++ }
      for (g in all) { split(g, a, SUBSEP); print a[2], 100 * (exp(all[g] / cnt[g]) - 1) > (dir "/" a[1] " all M.dat") }
      for (g in gm) { split(g, a, SUBSEP); print a[2], 100 * (exp(gm[g] / cm[g]) - 1) > (dir "/" a[1] " M=" a[3] ".dat") } }' "$csv"
  for f in "$tmp"/*.dat; do sort -g "$f" -o "$f"; done
  {
    echo "set terminal pngcairo size 900,520 font ',9' noenhanced"
    echo "set output '$out'"
    echo "set grid; set key outside right font ',8'; set xlabel 'sparsity budget rho'; set xrange [0:*]; set yrange [0:*]"
    echo "set ylabel 'latency over the dense layer (%, geomean over shapes)'"
    echo "set title 'latency vs budget — $(basename "$(dirname "$csv")")'"
    echo -n "plot "
    first=1
    for f in "$tmp"/*.dat; do
      [[ $first == 1 ]] || echo -n ", "
      first=0
      t=$(basename "$f" .dat)
      echo -n "'$f' using 1:2 with linespoints lw $([[ $t == *"all M"* ]] && echo 3 || echo 1) title '$t'"
    done
    echo ", 5 with lines dt 2 lc rgb 'gray' title '+5 %', 3 with lines dt 3 lc rgb 'gray' title '+3 %'"
  } | gnuplot
else
  echo "bench/plot-sparsity.sh: $csv is neither a quant-error nor a bench CSV" >&2
  exit 2
fi
echo "wrote $out"
