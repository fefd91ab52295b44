#!/bin/bash
# Session 30 call 1: correctness on branch wip-producer-dedupe (main 04457c8 + one producer ring fill in gemm_tma.cu).
# Lanes in parallel: pipes_b (forced pipes incl. persistent + persistent_tiles), llama (lqq, qoq, w8a8 through the table),
# bf16+bias, sparse+sparse_llama, w4ax+w4axs+int4_mma (not run on a GPU since session 28).
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD; T0=$(date +%s)
O=/tmp/o; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s30c1.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build.txt 2>&1 || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built at $(( $(date +%s) - T0 )) s"
lane() {  # name cases... ; env from caller
  local name=$1; shift
  for c in "$@"; do
    left=$(( 570 - ($(date +%s) - T0) )); [ $left -lt 20 ] && { echo "no time for $c" > $O/gpu-$c.txt; continue; }
    (cd build-dev && QJIT_CACHE_DIR=/tmp/qt-$name CK_RUN_CASE=$c CK_DEFAULT_TIMEOUT=600 timeout $left ./test_gpu > $O/gpu-$c.txt 2>&1; echo "rc=$?" >> $O/gpu-$c.txt)
  done
}
lane a pipes_b &
QJIT_TEST_SCHEMES=w4a8-lqq,w4a8-qoq,w8a8 lane b llama &
lane c bias bf16 &
lane d sparse sparse_llama &
lane e w4ax w4axs int4_mma &
wait
for c in pipes_b llama bias bf16 sparse sparse_llama w4ax w4axs int4_mma; do echo "== $c: $(grep -E 'Checks' $O/gpu-$c.txt) $(tail -1 $O/gpu-$c.txt) exact lines $(grep -c 'acc exact' $O/gpu-$c.txt)"; grep -E ":F:|:E:" $O/gpu-$c.txt | head -5 | cut -c1-400; done
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c1.tgz .
