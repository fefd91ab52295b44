#!/usr/bin/env bash
# Session 22, call 10: the one-part activation kernel (lib/act_row.cu, every scheme's) with session 22's two
# in-place changes: the row's largest |x| in FP16 pairs (one LOP3 + one max.f16x2 per two values) over only
# the chunks the row has. A/B against HEAD's templates (QJIT_TEMPLATE_PATH=.devdeps/ab-head22/templates).
# Prediction: the kernel alone at K = 4096, M = 1 4.96 -> ~4.4 us; layers at M = 1 on 4096x4096 -0.3..-0.6 us
# for every scheme, less on the long rows; ~5 % off the kernel at M = 1024.
set -u
out=$OUT; T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi -L > $out/device.txt 2>&1; cat $out/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && timeout 240 cmake --build build-dev -j16 --target test_gpu qjit_cli qjit_static) > $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
gcc -O2 -I base -I codegen -I include -I runtime -I cache -I /usr/local/cuda/include .devdeps/tools/act_time.c build-dev/libqjit.a -L/usr/local/cuda/lib64 -lnvrtc -llua5.4 -lm -lpthread -ldl -o act_time >> $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
stamp built
export QJIT_CACHE_DIR=/tmp/qc
A="kernel=act-quant;arch=sm_90a"
KEYS=("$A;bits=4;threads=512" "$A;bits=8;threads=512" "$A;bits=8;rowsum=1;threads=512" "$A;bits=4;ctas=3;threads=512" "$A;bits=8+4;scales=1;inplace=1;ctas=3;threads=512")
timeout 60 ./act_time "${KEYS[@]}" > $out/act-time-new.txt 2>&1; echo "rc=$?" >> $out/act-time-new.txt
QJIT_TEMPLATE_PATH=$PWD/.devdeps/ab-head22/templates timeout 60 ./act_time "${KEYS[@]}" > $out/act-time-head.txt 2>&1; echo "rc=$?" >> $out/act-time-head.txt
python3 - $out <<'PY'
import re, sys
o = sys.argv[1]
def load(f):
    d = {}
    for l in open(f):
        m = re.match(r"K=\s*(\d+) M=\s*(\d+)\s+([\d.]+) us\s+(\S+)", l)
        if m: d[(m.group(4), int(m.group(1)), int(m.group(2)))] = float(m.group(3))
    return d
a, b = load(o + "/act-time-head.txt"), load(o + "/act-time-new.txt")
for k in sorted(a):
    if k in b and k[2] in (1, 1024): print("%-60s K=%5d M=%4d head %6.2f new %6.2f" % (k[0][24:], k[1], k[2], a[k], b[k]))
PY
stamp timed
B="./build-dev/qjit bench --scheme w4a8-lqq,w4a4,w4a8-qoq,w8a8,w4ax-s --no-peers --reps 10 --m 1,16,64 --shapes 4096x4096,4096x11008,8192x28672"
timeout 110 $B --csv $out/ab-new.csv > $out/ab-new.txt 2>&1; echo "rc=$?" >> $out/ab-new.txt
QJIT_TEMPLATE_PATH=$PWD/.devdeps/ab-head22/templates timeout 110 $B --csv $out/ab-head.csv > $out/ab-head.txt 2>&1; echo "rc=$?" >> $out/ab-head.txt
stamp bench
grep -E "rc=|WRONG" $out/ab-new.txt $out/ab-head.txt
python3 - $out <<'PY'
import csv, sys
o = sys.argv[1]
def load(f):
    return {(r["scheme"], r["N"], r["K"], r["M"]): float(r["qjit_us"]) for r in csv.DictReader(open(f)) if r["forced"] == "0"}
a, b = load(o + "/ab-head.csv"), load(o + "/ab-new.csv")
for k in sorted(a):
    if k in b: print("%-9s %5sx%-5s M=%-3s head %7.2f new %7.2f  %+.2f" % (k[0], k[1], k[2], k[3], a[k], b[k], b[k] - a[k]))
PY
(CK_RUN_CASE=misc timeout 250 ./build-dev/test_gpu > $out/gpu-misc.txt 2>&1; echo "rc=$?" >> $out/gpu-misc.txt)
stamp misc
grep -E "Checks|rc=|:F:|:E:|one-part|activation" $out/gpu-misc.txt | head -20
