#!/bin/bash
# Session 29 call 4: the activation kernel a warp a row (act-quant rows=4) for buckets past 128 tokens:
# A = the same templates with it off (D.ACT_ROWS_M out of reach), w4a8-lqq, no peers; B = the table of every
# W4A8/W8A8 scheme with it, against cuBLAS at M = 128..4096.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD; T0=$(date +%s)
O=/tmp/o; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s29c4.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build.txt 2>&1 || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
Q=$root/build-dev/qjit
rm -rf /tmp/tpl-a && cp -r templates /tmp/tpl-a && sed -i 's/^D.ACT_ROWS_M = 128$/D.ACT_ROWS_M = 1 << 30/' /tmp/tpl-a/dispatch.lua
grep -n "^D.ACT_ROWS_M" /tmp/tpl-a/dispatch.lua templates/dispatch.lua
QJIT_TEMPLATE_PATH=/tmp/tpl-a QJIT_CACHE_DIR=/tmp/qa timeout 200 $Q bench --m 256,512,1024,4096 --reps 20 --no-peers --csv $O/norows.csv --json /tmp/ja > $O/norows.txt 2>&1
echo "A rc=$? at $(( $(date +%s) - T0 )) s"
QJIT_CACHE_DIR=/tmp/qb timeout $(( 590 - ($(date +%s) - T0) )) $Q bench --scheme w4a8-lqq,w4a8-qoq,w4a8-is,w8a8 --m 128,256,512,1024,4096 --reps 20 --csv $O/table.csv --json $O/table.json > $O/table.txt 2>&1
echo "B rc=$?"
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c4.tgz .
