#!/usr/bin/env bash
# session 25, call 4 (final code): the decode step of record (lqq, w8a8, peers); qjit.Linear host parts;
# then GPU cases pipes_a, pipes_b, bias (by scheme), sparse, misc and pytest in parallel
set -u
out=$OUT; T0=$(date +%s); root=$PWD
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi -L > $out/device.txt 2>&1; cat $out/device.txt
export PATH=/usr/local/cuda/bin:$PATH QJIT_CACHE_DIR=/tmp/qc
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && timeout 240 cmake --build build-dev -j16 --target qjit_cli test_gpu) > $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
grep -c -i warning $out/build.txt
stamp built
timeout 150 ./build-dev/qjit bench --layers 32 --scheme lqq,w8a8 --reps 10 --csv $out/step.csv > $out/step.txt 2>&1; echo "rc=$?" >> $out/step.txt
grep -A16 "^summary w4a8-lqq" $out/step.txt
stamp step
rm -rf /tmp/site; python3 -m pip install -q --no-build-isolation --no-deps --no-cache-dir --target /tmp/site ./python > /tmp/pip.txt 2>&1 || cat /tmp/pip.txt
(cd /tmp && PYTHONPATH=/tmp/site timeout 60 python3 $root/.devdeps/hostparts.py > $out/hostparts.txt 2>&1); tail -4 $out/hostparts.txt
stamp hostparts
run_case() { # name case schemes
  (QJIT_TEST_SCHEMES=$3 CK_RUN_CASE=$2 timeout $(( 575 - ($(date +%s) - T0) )) ./build-dev/test_gpu > /tmp/gpu-$1.txt 2>&1; echo "rc=$?" >> /tmp/gpu-$1.txt) &
}
C="misc pipes_a pipes_b bias-lqq bias-qoq bias-is bias-rest sparse"
run_case misc misc ""; run_case pipes_a pipes_a ""; run_case pipes_b pipes_b ""; run_case sparse sparse ""
run_case bias-lqq bias w4a8-lqq; run_case bias-qoq bias w4a8-qoq; run_case bias-is bias w4a8-is; run_case bias-rest bias w8a8,w4a4,w4ax,w4ax-s
(cd /tmp && QJIT_TEST_INSTALLED=1 PYTHONPATH=/tmp/site timeout 300 python3 -m pytest -q -s -p no:cacheprovider $root/python/tests > /tmp/gpu-pytest.txt 2>&1; echo "rc=$?" >> /tmp/gpu-pytest.txt)
tail -3 /tmp/gpu-pytest.txt
wait
stamp gpu
for c in $C; do echo "== $c: $(grep -E 'Checks' /tmp/gpu-$c.txt) $(tail -1 /tmp/gpu-$c.txt)"; grep -E ":F:|:E:" /tmp/gpu-$c.txt | head -5; done
for c in $C pytest; do echo "######## $c"; cat /tmp/gpu-$c.txt; done > $out/gpu-cases.txt
