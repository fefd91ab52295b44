#!/usr/bin/env bash
# On the GPU machine: decode-path floors (bench/probe.cu) and per-kernel times
# of qjit's small-M forward under ncu. Expects build-dev/ (device-tests.sh
# builds it). Output: $OUT/probe.txt, $OUT/ncu-small-m.txt.
set -uo pipefail
out=${OUT:-out}
mkdir -p "$out"
nvcc -O3 -std=c++17 -arch=sm_90a -o /tmp/qjit-probe bench/probe.cu && /tmp/qjit-probe | tee "$out/probe.txt"
export QJIT_CACHE_DIR=${QJIT_CACHE_DIR:-/tmp/qjit-device-cache}
ncu --clock-control none --kernel-name regex:qjit \
  --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed \
  ./build-dev/qjit bench --no-peers --reps 5 --m ${PROBE_M:-1,16} \
  --shapes ${PROBE_SHAPES:-4096x4096,22016x4096,57344x8192} >"$out/ncu-small-m.txt" 2>&1
python3 - "$out/ncu-small-m.txt" >"$out/ncu-summary.txt" <<'PY'
import re, sys
cur = None
for line in open(sys.argv[1]):
    m = re.match(r"\s+(qjit_\S+)\s*\(", line)
    if m:
        if cur: print(cur)
        cur = m.group(1)[:60]; continue
    m = re.match(r"\s+(gpu__time_duration.sum|dram__bytes_read.sum|dram__throughput\S*)\s+(\S+)\s+([\d.,]+)", line)
    if m and cur:
        cur += "  %s=%s%s" % (m.group(1).split("_")[0] + m.group(1).split(".")[0][-8:], m.group(3), m.group(2))
if cur: print(cur)
PY
grep -E "^ +(4096|22016|57344) " "$out/ncu-small-m.txt"
awk '{c[$1]++} END {for (k in c) print c[k], k}' "$out/ncu-summary.txt" | sort -k2 | head
