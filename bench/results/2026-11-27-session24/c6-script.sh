#!/usr/bin/env bash
# session 24, call 6 (final code): the decode step of record (lqq, w8a8, peers); BF16 against FP16 timings;
# qjit.Linear host cost with out=; then the GPU cases bf16 (the schemes' forced pipes), misc, llama in parallel
set -u
out=$OUT; T0=$(date +%s); root=$PWD
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi -L > $out/device.txt 2>&1; cat $out/device.txt
export PATH=/usr/local/cuda/bin:$PATH QJIT_CACHE_DIR=/tmp/qc
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && timeout 240 cmake --build build-dev -j16 --target qjit_cli test_gpu) > $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
grep -c -i warning $out/build.txt
stamp built
timeout 120 ./build-dev/qjit bench --layers 32 --scheme lqq,w8a8 --reps 10 --csv $out/step.csv > $out/step.txt 2>&1; echo "rc=$?" >> $out/step.txt
stamp step
S=12288x4096,4096x4096,22016x4096,4096x11008
for dt in f16 bf16; do
  timeout 100 ./build-dev/qjit bench --dtype $dt --scheme all --m 1,16,128,1024 --shapes $S --no-peers --reps 20 --csv /tmp/dt-$dt.csv > /tmp/dt-$dt.txt 2>&1; echo "rc=$?" >> /tmp/dt-$dt.txt
  stamp $dt
done
for dt in f16 bf16; do echo "######## $dt"; cat /tmp/dt-$dt.txt; done > $out/dtype.txt
python3 - <<'PY'
import csv
a = {(r['scheme'], r['N'], r['K'], r['M']): r for r in csv.DictReader(open('/tmp/dt-f16.csv'))}
b = {(r['scheme'], r['N'], r['K'], r['M']): r for r in csv.DictReader(open('/tmp/dt-bf16.csv'))}
import math
rs = []
for k in a:
    if k in b and float(a[k]['qjit_us']) > 0 and float(b[k]['qjit_us']) > 0:
        rs.append(float(b[k]['qjit_us']) / float(a[k]['qjit_us']))
        print(*k, a[k]['qjit_us'], b[k]['qjit_us'], a[k]['tokens_us'], b[k]['tokens_us'], a[k]['variant'] == b[k]['variant'].replace(';dtype=bf16', ''))
print(f"bf16/f16 time: geomean {math.exp(sum(map(math.log, rs)) / len(rs)):.3f}, min {min(rs):.3f}, max {max(rs):.3f} over {len(rs)} points")
PY
[ -d /tmp/site ] || python3 -m pip install -q --no-build-isolation --no-deps --no-cache-dir --target /tmp/site ./python > /tmp/pip.txt 2>&1
(cd /tmp && PYTHONPATH=/tmp/site timeout 60 python3 $root/.devdeps/hostparts.py > $out/hostparts.txt 2>&1); tail -4 $out/hostparts.txt
stamp hostcost
run_case() { # name case schemes
  (QJIT_TEST_SCHEMES=$3 CK_RUN_CASE=$2 timeout $(( 560 - ($(date +%s) - T0) )) ./build-dev/test_gpu > /tmp/gpu-$1.txt 2>&1; echo "rc=$?" >> /tmp/gpu-$1.txt) &
}
run_case bf16-lqq bf16 w4a8-lqq; run_case bf16-qoq bf16 w4a8-qoq; run_case bf16-is bf16 w4a8-is; run_case bf16-rest bf16 w8a8,w4a4,w4ax,w4ax-s
run_case misc misc ""; run_case llama llama ""
wait
stamp gpu
for c in bf16-lqq bf16-qoq bf16-is bf16-rest misc llama; do echo "== $c: $(grep -E 'Checks' /tmp/gpu-$c.txt) $(tail -1 /tmp/gpu-$c.txt) exact $(grep -c 'exact' /tmp/gpu-$c.txt)"; grep -E ":F:|:E:" /tmp/gpu-$c.txt | head -5; done
for c in bf16-lqq bf16-qoq bf16-is bf16-rest misc llama; do echo "######## $c"; cat /tmp/gpu-$c.txt; done > $out/gpu-cases.txt
