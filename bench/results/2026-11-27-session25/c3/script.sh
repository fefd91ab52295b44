#!/usr/bin/env bash
# session 25, call 3: tokens in flight in the decode pipe (x_steps) A/B; the M = 33..64 one-wave dispatch A/B
# on three models' steps and single calls
set -u
out=$OUT; T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi -L > $out/device.txt 2>&1
export PATH=/usr/local/cuda/bin:$PATH
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && timeout 240 cmake --build build-dev -j16 --target qjit_cli test_gpu) > $out/build.txt 2>&1 || { tail -30 $out/build.txt; exit 1; }
grep -c -i warning $out/build.txt
stamp built
mk() { rm -rf /tmp/$1 && cp -r templates /tmp/$1; }
mk tnew
mk tx0; cp .devdeps/s25/gemm_decode.old.cu /tmp/tx0/gemm_decode.cu; cp .devdeps/s25/gemm_decode.old.lua /tmp/tx0/gemm_decode.lua
mk tx4; cp .devdeps/s25/gemm_decode.x4.lua /tmp/tx4/gemm_decode.lua
mk td0; cp .devdeps/s25/dispatch.old.lua /tmp/td0/dispatch.lua
b() { # label tpl args...
  local lab=$1 t=$2; shift 2
  echo "######## $lab $*" >> $out/ab.txt
  QJIT_TEMPLATE_PATH=/tmp/$t QJIT_CACHE_DIR=/tmp/qc-$t timeout 120 ./build-dev/qjit bench --no-peers --reps 10 "$@" > /tmp/o.txt 2>&1
  cat /tmp/o.txt >> $out/ab.txt
  printf "%-34s %s\n" "$lab" "$(grep -E 'tokens in' /tmp/o.txt | grep -v summary | awk '{printf "%s M=%s %s (%s)  ", $1, $(NF-5), $(NF-4), $(NF-1)}')"
}
for sh in 4096x4096 4096x11008; do
  for t in tx0 tnew tx4; do b "$sh $t" $t --layers 128 --shapes $sh --scheme lqq,w8a8 --m 1,4,8; done
done
stamp xsteps
L3=6144x4096,4096x4096,28672x4096,4096x14336
L13=15360x5120,5120x5120,27648x5120,5120x13824
for t in td0 tnew; do
  b "llama2-7b $t" $t --layers 32 --scheme lqq --m 32,64
  b "llama3-8b $t" $t --layers 32 --shapes $L3 --scheme lqq --m 1,64
  b "llama2-13b $t" $t --layers 32 --shapes $L13 --scheme lqq --m 1,64
done
stamp steps
for t in td0 tnew; do
  QJIT_TEMPLATE_PATH=/tmp/$t QJIT_CACHE_DIR=/tmp/qc-$t timeout 150 ./build-dev/qjit bench --scheme lqq,w8a8 --m 48,64 --shapes 12288x4096,22016x4096,4096x4096,4096x11008,10240x8192,57344x8192,8192x8192,28672x4096,15360x5120,27648x5120 --no-peers --reps 20 --csv $out/single-$t.csv > /tmp/s-$t.txt 2>&1; echo "rc=$?" >> /tmp/s-$t.txt
  stamp single-$t
done
python3 - "$out" <<'PY'
import csv, sys
o = sys.argv[1]
a = {(r['scheme'], r['N'], r['K'], r['M']): r for r in csv.DictReader(open(o + '/single-td0.csv'))}
b = {(r['scheme'], r['N'], r['K'], r['M']): r for r in csv.DictReader(open(o + '/single-tnew.csv'))}
for k in a:
    if k in b:
        x, y = float(a[k]['qjit_us']), float(b[k]['qjit_us'])
        ch = '' if a[k]['variant'] == b[k]['variant'] else 'CHANGED ' + b[k]['variant'].split('pipe=')[1]
        print(*k, f"{x:8.2f} {y:8.2f} {y / x:6.3f}", ch)
PY
