#!/usr/bin/env bash
# session 24, call 1: GEMMs trigger the next GEMM's launch (PDL) + the capture guard test + qjit.Linear out= --
# build, GPU cases in parallel, the Python package's tests pip-installed
set -u
out=$OUT; T0=$(date +%s); root=$PWD
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi -L > $out/device.txt 2>&1; cat $out/device.txt
export PATH=/usr/local/cuda/bin:$PATH QJIT_CACHE_DIR=/tmp/qc
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && timeout 240 cmake --build build-dev -j16 --target qjit_cli test_gpu) > $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
grep -c -i "warning" $out/build.txt
stamp built
cases="misc llama pipes_a pipes_b sparse w4ax w4axs int4_mma"
for c in $cases; do
  (CK_RUN_CASE=$c timeout $(( 540 - ($(date +%s) - T0) )) ./build-dev/test_gpu > /tmp/gpu-$c.txt 2>&1; echo "rc=$?" >> /tmp/gpu-$c.txt) &
done
(python3 -m pip install -q --no-build-isolation --no-deps --no-cache-dir --target /tmp/site ./python > /tmp/pip.txt 2>&1; echo "pip rc=$?" >> /tmp/pip.txt
 cd /tmp && QJIT_TEST_INSTALLED=1 PYTHONPATH=/tmp/site timeout 300 python3 -m pytest -q -s -p no:cacheprovider $root/python/tests > $out/pytest.txt 2>&1; echo "rc=$?" >> $out/pytest.txt) &
wait
stamp done
cat /tmp/pip.txt
grep -E "passed|failed|host cost|^E " $out/pytest.txt | head -20
for c in $cases; do echo "== $c: $(grep -E 'Checks' /tmp/gpu-$c.txt) $(tail -1 /tmp/gpu-$c.txt) points $(grep -c 'exact' /tmp/gpu-$c.txt)"; grep -E ":F:|:E:" /tmp/gpu-$c.txt | head -5; done
for c in $cases; do echo "######## $c"; cat /tmp/gpu-$c.txt; done > $out/gpu-cases.txt
