#!/usr/bin/env bash
# session 24, call 3: the late launch trigger (after the main loop's loads) A/B on the decode step; host-cost parts
set -u
out=$OUT; T0=$(date +%s); root=$PWD
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi -L > $out/device.txt 2>&1; cat $out/device.txt
export PATH=/usr/local/cuda/bin:$PATH QJIT_CACHE_DIR=/tmp/qc3
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && timeout 240 cmake --build build-dev -j16 --target qjit_cli test_gpu) > $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
stamp built
rm -rf /tmp/t0 && cp -r templates /tmp/t0 && sed -i '/griddepcontrol.launch_dependents/d' /tmp/t0/lib/split_k.cu /tmp/t0/gemm_decode.cu
grep -c launch_dependents templates/lib/split_k.cu templates/gemm_decode.cu /tmp/t0/lib/split_k.cu /tmp/t0/gemm_decode.cu
for r in 1 2; do
timeout 100 ./build-dev/qjit bench --layers 32 --scheme lqq --no-peers --reps 10 > $out/step-late$r.txt 2>&1; echo "rc=$?" >> $out/step-late$r.txt
stamp late
QJIT_TEMPLATE_PATH=/tmp/t0 QJIT_CACHE_DIR=/tmp/qc0 timeout 100 ./build-dev/qjit bench --layers 32 --scheme lqq --no-peers --reps 10 > $out/step-none$r.txt 2>&1; echo "rc=$?" >> $out/step-none$r.txt
stamp none
done
for f in late1 none1 late2 none2; do echo "== $f"; grep -A14 "^summary" $out/step-$f.txt; done
rm -rf /tmp/site; python3 -m pip install -q --no-build-isolation --no-deps --no-cache-dir --target /tmp/site ./python > /tmp/pip.txt 2>&1 || cat /tmp/pip.txt
(cd /tmp && PYTHONPATH=/tmp/site timeout 120 python3 $root/.devdeps/hostparts.py > $out/hostparts.txt 2>&1); cat $out/hostparts.txt
stamp hostparts
