#!/usr/bin/env bash
# session 23, call 7: BF16 layers -- the GPU case bf16 (every scheme and group, every pipe forced, two-part
# schemes) beside the Python package's tests (bf16 included), pip-installed
set -u
out=$OUT; T0=$(date +%s); root=$PWD
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi -L > $out/device.txt 2>&1; cat $out/device.txt
export PATH=/usr/local/cuda/bin:$PATH QJIT_CACHE_DIR=/tmp/qc
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && timeout 240 cmake --build build-dev -j16 --target test_gpu) > $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
grep -c -i "warning" $out/build.txt
stamp built
(CK_RUN_CASE=bf16 timeout $(( 320 - ($(date +%s) - T0) )) ./build-dev/test_gpu > $out/gpu-bf16.txt 2>&1; echo "rc=$?" >> $out/gpu-bf16.txt) &
python3 -m pip install -q --no-build-isolation --no-deps --no-cache-dir --target /tmp/site ./python > $out/pip.txt 2>&1; echo "pip rc=$?"
(cd /tmp && QJIT_TEST_INSTALLED=1 PYTHONPATH=/tmp/site timeout 200 python3 -m pytest -q -s -p no:cacheprovider $root/python/tests > $out/pytest.txt 2>&1; echo "rc=$?" >> $out/pytest.txt)
stamp pytest
grep -E "passed|failed|host cost|^E " $out/pytest.txt | head -20
wait
stamp gpu
echo "== bf16: $(grep -E 'Checks' $out/gpu-bf16.txt) $(tail -1 $out/gpu-bf16.txt) points $(grep -c 'acc exact' $out/gpu-bf16.txt)"
grep -E ":F:|:E:" $out/gpu-bf16.txt | head -8
