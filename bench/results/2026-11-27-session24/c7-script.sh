#!/usr/bin/env bash
# session 24, call 7 (final code): the Python package's tests pip-installed, then the GPU cases misc and llama alone
set -u
out=$OUT; T0=$(date +%s); root=$PWD
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi -L > $out/device.txt 2>&1; cat $out/device.txt
export PATH=/usr/local/cuda/bin:$PATH QJIT_CACHE_DIR=/tmp/qc
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && timeout 240 cmake --build build-dev -j16 --target test_gpu) > $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
stamp built
rm -rf /tmp/site; python3 -m pip install -q --no-build-isolation --no-deps --no-cache-dir --target /tmp/site ./python > $out/pip.txt 2>&1; echo "pip rc=$?"
(cd /tmp && QJIT_TEST_INSTALLED=1 PYTHONPATH=/tmp/site timeout 200 python3 -m pytest -q -s -p no:cacheprovider $root/python/tests > $out/pytest.txt 2>&1; echo "rc=$?" >> $out/pytest.txt)
grep -E "passed|failed|host cost|^E " $out/pytest.txt | head
stamp pytest
(CK_RUN_CASE=misc timeout 300 ./build-dev/test_gpu > /tmp/gpu-misc.txt 2>&1; echo "rc=$?" >> /tmp/gpu-misc.txt) &
(CK_RUN_CASE=llama timeout 300 ./build-dev/test_gpu > /tmp/gpu-llama.txt 2>&1; echo "rc=$?" >> /tmp/gpu-llama.txt) &
wait
stamp gpu
for c in misc llama; do echo "== $c: $(grep -E 'Checks' /tmp/gpu-$c.txt) $(tail -1 /tmp/gpu-$c.txt) exact $(grep -c 'exact' /tmp/gpu-$c.txt)"; grep -E ":F:|:E:" /tmp/gpu-$c.txt | head -5; done
for c in misc llama; do echo "######## $c"; cat /tmp/gpu-$c.txt; done > $out/gpu-cases.txt
