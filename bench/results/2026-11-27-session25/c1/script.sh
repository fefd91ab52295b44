#!/usr/bin/env bash
# session 25, call 1: launch trigger x carveout x spread A/B on the decode step; then the bias GPU case and pytest
set -u
out=$OUT; T0=$(date +%s); root=$PWD
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi -L > $out/device.txt 2>&1; cat $out/device.txt
export PATH=/usr/local/cuda/bin:$PATH
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && timeout 240 cmake --build build-dev -j16 --target qjit_cli test_gpu) > $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
grep -c -i warning $out/build.txt
stamp built
rm -rf /tmp/tE && cp -r templates /tmp/tE
sed -i 's|asm volatile("griddepcontrol.wait;\\n" ::: "memory");|asm volatile("griddepcontrol.wait;\\n" ::: "memory"); asm volatile("griddepcontrol.launch_dependents;\\n" ::: "memory");|' /tmp/tE/lib/token_wait.cu /tmp/tE/gemm_tma.cu
grep -c launch_dependents /tmp/tE/lib/token_wait.cu /tmp/tE/gemm_tma.cu
B="--layers 32 --no-peers --reps 10 --m 1,4,16,64"
run() { # name tpl env...
  local n=$1 t=$2; shift 2
  env "$@" QJIT_TEMPLATE_PATH=$t QJIT_CACHE_DIR=/tmp/qc-$(basename $t) timeout 150 ./build-dev/qjit bench $B --scheme ${SCH:-lqq} > $out/step-$n.txt 2>&1; echo "rc=$?" >> $out/step-$n.txt
  stamp $n
}
SCH=lqq,w8a8 run A templates X=1
SCH=lqq,w8a8 run E /tmp/tE QJIT_EXP_CARVEOUT=100 QJIT_EXP_SPREAD=1
run B /tmp/tE X=1
run C /tmp/tE QJIT_EXP_CARVEOUT=100
run D /tmp/tE QJIT_EXP_SPREAD=1
run F templates QJIT_EXP_CARVEOUT=100 QJIT_EXP_SPREAD=1
for f in A B C D E F; do echo "== $f"; grep "tokens in" $out/step-$f.txt | awk '{print $1, $4, $5, $8}'; done
export QJIT_CACHE_DIR=/tmp/qc
run_case() { # name case schemes
  (QJIT_TEST_SCHEMES=$3 CK_RUN_CASE=$2 timeout $(( 570 - ($(date +%s) - T0) )) ./build-dev/test_gpu > /tmp/gpu-$1.txt 2>&1; echo "rc=$?" >> /tmp/gpu-$1.txt) &
}
run_case bias-lqq bias w4a8-lqq; run_case bias-qoq bias w4a8-qoq; run_case bias-is bias w4a8-is; run_case bias-rest bias w8a8,w4a4,w4ax,w4ax-s
rm -rf /tmp/site; python3 -m pip install -q --no-build-isolation --no-deps --no-cache-dir --target /tmp/site ./python > /tmp/pip.txt 2>&1 || cat /tmp/pip.txt
(cd /tmp && QJIT_TEST_INSTALLED=1 PYTHONPATH=/tmp/site timeout 300 python3 -m pytest -q -s -p no:cacheprovider $root/python/tests > $out/pytest.txt 2>&1; echo "rc=$?" >> $out/pytest.txt)
tail -3 $out/pytest.txt
wait
stamp gpu
for c in bias-lqq bias-qoq bias-is bias-rest; do echo "== $c: $(grep -E 'Checks' /tmp/gpu-$c.txt) $(tail -1 /tmp/gpu-$c.txt)"; grep -E ":F:|:E:" /tmp/gpu-$c.txt | head -5; done
for c in bias-lqq bias-qoq bias-is bias-rest; do echo "######## $c"; cat /tmp/gpu-$c.txt; done > $out/gpu-cases.txt
