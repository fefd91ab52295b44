#!/usr/bin/env bash
# Plots latency vs M per shape from a `qjit bench --csv` file: each scheme
# the run measured and the cuBLASLt peers, log-log, one panel per N x K.
# Needs gnuplot.
#   bench/plot.sh bench/results/<run>/bench.csv [out.png]
set -euo pipefail
csv=${1:?usage: bench/plot.sh BENCH.csv [OUT.png]}
out=${2:-${csv%.csv}.png}
shapes=$(tail -n +2 "$csv" | cut -d, -f1,2 | awk '!seen[$0]++')
# Column 13 names the scheme (files written before it existed hold w4a8-lqq only).
schemes=$(tail -n +2 "$csv" | awk -F, '{ print (NF >= 13 ? $13 : "w4a8-lqq") }' | awk '!seen[$0]++')
first=$(echo "$schemes" | head -1)
n=$(echo "$shapes" | wc -l)
cols=4
rows=$(( (n + cols - 1) / cols ))
{
  echo "set terminal pngcairo size $((cols * 420)),$((rows * 340)) font ',9'"
  echo "set output '$out'"
  echo "set datafile separator ','"
  echo "set logscale xy; set grid; set key top left font ',8'"
  echo "set xlabel 'M (tokens)'; set ylabel 'time per call (us)'"
  echo "set multiplot layout $rows,$cols title 'qjit vs cuBLASLt — $(basename "$(dirname "$csv")")'"
  while IFS=, read -r N K; do
    f="(\$1==$N && \$2==$K)"
    echo "set title '${N} x ${K}'"
    echo -n "plot "
    for s in $schemes; do
      # Dense layers only: rows of a sparsity budget (column 15 > 0) are bench/plot-sparsity.sh's.
      sel="(strcol(13) eq '$s' || (strcol(13) eq '' && '$s' eq 'w4a8-lqq')) && !(valid(15) && \$15 > 0)"
      echo "'$csv' every ::1 using (${f} && ${sel} && !(valid(12) && \$12 == 1) ? \$3 : NaN):4 with linespoints lw 2 title 'qjit $s', \\"
    done
    # The peers once (their columns repeat on every scheme's rows).
    p="${f} && (strcol(13) eq '$first' || strcol(13) eq '') && !(valid(15) && \$15 > 0)"
    echo "     '$csv' every ::1 using (${p} && \$7>0 ? \$3 : NaN):7 with linespoints dt 2 title 'cublas bf16', \\"
    echo "     '' every ::1 using (${p} && \$8>0 ? \$3 : NaN):8 with linespoints dt 2 title 'cublas int8', \\"
    echo "     '' every ::1 using (${p} && \$9>0 ? \$3 : NaN):9 with linespoints dt 2 title 'cublas fp8'"
  done <<< "$shapes"
  echo "unset multiplot"
} | gnuplot
echo "wrote $out"
