#!/bin/bash
# Session 30 call 2: where the activation kernel's time goes at M >= 512 (forward - GEMM alone).
# (1) bench w4a8-lqq, table dispatch, 3 shapes x M=256..4096, no peers; (2) the same with act_quant.cu not
# triggering the GEMM early (no PDL overlap: the GEMM launches when the activation grid has finished);
# (3) ncu kernel durations (serialized) of one forward at M = 512, 1024, 4096 on 4096x4096;
# (4) bf16 on the persistent pipes (not run in call 1).
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD; T0=$(date +%s)
O=/tmp/o; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s30c2.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build.txt 2>&1 || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
Q=$root/build-dev/qjit
rm -rf /tmp/tpl-notrig && cp -r templates /tmp/tpl-notrig && sed -i '/griddepcontrol.launch_dependents/d' /tmp/tpl-notrig/act_quant.cu
grep -c launch_dependents /tmp/tpl-notrig/act_quant.cu
SH=4096x4096,28672x4096,4096x14336; MS=256,512,1024,2048,4096
QJIT_CACHE_DIR=/tmp/qc-base timeout 200 $Q bench --shapes $SH --m $MS --no-peers --reps 20 --csv $O/base.csv > $O/base.txt 2>&1
echo "base done $(( $(date +%s) - T0 )) s"
QJIT_TEMPLATE_PATH=/tmp/tpl-notrig QJIT_CACHE_DIR=/tmp/qc-notrig timeout 200 $Q bench --shapes $SH --m $MS --no-peers --reps 20 --csv $O/notrig.csv > $O/notrig.txt 2>&1
echo "notrig done $(( $(date +%s) - T0 )) s"
paste -d, <(cut -d, -f1-4,17 $O/base.csv) <(cut -d, -f4,17 $O/notrig.csv) | column -t -s, | head -40
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for m in 512 1024 4096; do
  QJIT_CACHE_DIR=/tmp/qc-base timeout 60 $NCU --clock-control none --metrics gpu__time_duration.sum,sm__cycles_active.avg,dram__bytes.sum.per_second \
     $Q bench --shapes 4096x4096 --m $m --no-peers --reps 5 > $O/ncu-$m.txt 2>&1
  echo "== ncu M=$m"; grep -E "^  [a-z_0-9]+.*\(|gpu__time_duration|dram__bytes" $O/ncu-$m.txt | awk '{print}' | tail -12
done
echo "ncu done $(( $(date +%s) - T0 )) s"
left=$(( 585 - ($(date +%s) - T0) ))
(cd build-dev && QJIT_TEST_PIPES="persist=1" QJIT_CACHE_DIR=/tmp/qt-bf16 CK_RUN_CASE=bf16 CK_DEFAULT_TIMEOUT=600 timeout $left ./test_gpu > $O/gpu-bf16.txt 2>&1; echo "rc=$?" >> $O/gpu-bf16.txt)
echo "== bf16: $(grep -E 'Checks' $O/gpu-bf16.txt) $(tail -n 1 $O/gpu-bf16.txt) exact lines $(grep -c 'acc exact' $O/gpu-bf16.txt)"; grep -E ":F:|:E:" $O/gpu-bf16.txt | head -5 | cut -c1-400
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c2.tgz .
