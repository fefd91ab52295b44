#!/usr/bin/env bash
# session 24, call 2: the decode step (qjit bench --layers 32): every scheme and the cuBLAS peers with the GEMMs'
# launch trigger; then w4a8-lqq without it (templates copied with the trigger removed) for the A/B
set -u
out=$OUT; T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi -L > $out/device.txt 2>&1; cat $out/device.txt
export PATH=/usr/local/cuda/bin:$PATH QJIT_CACHE_DIR=/tmp/qc
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && timeout 240 cmake --build build-dev -j16 --target qjit_cli) > $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
stamp built
rm -rf /tmp/t0 && cp -r templates /tmp/t0 && sed -i '/griddepcontrol.launch_dependents/d' /tmp/t0/lib/token_wait.cu /tmp/t0/gemm_tma.cu
grep -c launch_dependents templates/lib/token_wait.cu templates/gemm_tma.cu /tmp/t0/lib/token_wait.cu /tmp/t0/gemm_tma.cu
timeout 330 ./build-dev/qjit bench --layers 32 --scheme lqq,w8a8 --reps 10 --csv $out/step.csv > $out/step.txt 2>&1; echo "rc=$?" >> $out/step.txt
stamp step
QJIT_TEMPLATE_PATH=/tmp/t0 QJIT_CACHE_DIR=/tmp/qc0 timeout 150 ./build-dev/qjit bench --layers 32 --scheme lqq --no-peers --reps 10 > $out/step-notrigger.txt 2>&1; echo "rc=$?" >> $out/step-notrigger.txt
stamp notrigger
cat $out/step.txt | grep -v "^$" | tail -60; grep -A20 "^summary" $out/step-notrigger.txt
root=$PWD
[ -d /tmp/site ] || python3 -m pip install -q --no-build-isolation --no-deps --no-cache-dir --target /tmp/site ./python > /tmp/pip.txt 2>&1
(cd /tmp && QJIT_TEST_INSTALLED=1 PYTHONPATH=/tmp/site timeout 120 python3 -m pytest -q -s -p no:cacheprovider -k host_cost $root/python/tests > $out/host-cost.txt 2>&1); grep -E "host cost|passed|failed" $out/host-cost.txt
stamp hostcost
