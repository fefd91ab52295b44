#!/usr/bin/env bash
# session 23, call 6: qjit.Linear's host cost per call, measured in bursts (the launch queue never full)
set -u
out=$OUT; T0=$(date +%s); root=$PWD
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi -L > $out/device.txt 2>&1; cat $out/device.txt
export PATH=/usr/local/cuda/bin:$PATH QJIT_CACHE_DIR=/tmp/qc
python3 -m pip install -q --no-build-isolation --no-deps --no-cache-dir --target /tmp/site ./python > $out/pip.txt 2>&1; echo "pip rc=$?"
stamp installed
cd /tmp && QJIT_TEST_INSTALLED=1 PYTHONPATH=/tmp/site timeout 200 python3 -m pytest -q -s -p no:cacheprovider $root/python/tests -k "host_cost or bad_input or graph" > $out/pytest-host.txt 2>&1; echo "rc=$?" >> $out/pytest-host.txt
stamp pytest
grep -E "passed|failed|host cost|^E " $out/pytest-host.txt | head
