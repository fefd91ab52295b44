#!/bin/bash
# Session 30 call 4: the activation kernel's threads a row (dispatch.lua D.QUANT_THREADS 512 / 256 / 128): fewer
# threads a row -> more CTAs an SM -> more loads in flight (K = 4096: one 16-byte load a thread at 512).
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD; T0=$(date +%s)
O=/tmp/o; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s30c4.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli > $O/build.txt 2>&1 || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
Q=$root/build-dev/qjit
for t in 512 256 128; do
  rm -rf /tmp/tpl-$t && cp -r templates /tmp/tpl-$t && sed -i "s/^D.QUANT_THREADS = 512/D.QUANT_THREADS = $t/" /tmp/tpl-$t/dispatch.lua
  grep -c "QUANT_THREADS = $t" /tmp/tpl-$t/dispatch.lua
  QJIT_TEMPLATE_PATH=/tmp/tpl-$t QJIT_CACHE_DIR=/tmp/qc-$t timeout 100 $Q bench --shapes 4096x4096,4096x14336,8192x28672 --m 256,1024,4096 --no-peers --reps 20 --csv $O/t$t.csv > $O/t$t.txt 2>&1
  echo "$t done $(( $(date +%s) - T0 )) s"
done
paste -d, <(cut -d, -f1-4,17 $O/t512.csv) <(cut -d, -f4,17 $O/t256.csv) <(cut -d, -f4,17 $O/t128.csv)
tar -C $O -czf $OUT/c4.tgz .
