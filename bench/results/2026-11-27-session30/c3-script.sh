#!/bin/bash
# Session 30 call 3: activation quantization without a division a value (lib/act_div.cu), against the committed
# templates (tpl-old, HEAD c548e26) in the same build: bench w4a8-lqq (one-part), w4a8-qoq (rowsum), w4ax (two-part
# gather) and BF16 lqq; the new wgmma peak in the header. Then the GPU cases with activation kernels in parallel:
# misc (one-part kernels, fused GEMMs), w4ax, w4axs, bf16, llama (lqq, qoq, w4a4).
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
root=$PWD; T0=$(date +%s)
O=/tmp/o; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s30c3.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli test_gpu > $O/build.txt 2>&1 || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
Q=$root/build-dev/qjit
rm -rf /tmp/tpl-old-root && mkdir -p /tmp/tpl-old-root && tar -C /tmp/tpl-old-root -xzf $orig/.devdeps/tpl-old.tgz
SH=4096x4096,4096x14336,8192x28672; MS=1,16,256,1024,4096
for t in old new; do
  TP=""; [ $t = old ] && TP=/tmp/tpl-old-root/templates
  QJIT_TEMPLATE_PATH=$TP QJIT_CACHE_DIR=/tmp/qc-$t timeout 150 $Q bench --scheme lqq,qoq --shapes $SH --m $MS --no-peers --reps 20 --csv $O/$t.csv > $O/$t.txt 2>&1
  echo "$t done $(( $(date +%s) - T0 )) s rc=$?"
done
grep -E "^device" $O/new.txt
python3 - $O/old.csv $O/new.csv <<'PY'
import csv,sys
o={ (r['scheme'],r['N'],r['K'],r['M']):r for r in csv.DictReader(open(sys.argv[1]))}
print("scheme    N     K     M     old_us  new_us  ratio | tok_old tok_new | act_old act_new")
for r in csv.DictReader(open(sys.argv[2])):
    k=(r['scheme'],r['N'],r['K'],r['M']); a=o.get(k)
    if not a: continue
    ou,nu=float(a['qjit_us']),float(r['qjit_us']); ot,nt=float(a['tokens_us']),float(r['tokens_us'])
    print(f"{k[0]:9s} {k[1]:5s} {k[2]:5s} {k[3]:5s} {ou:7.2f} {nu:7.2f} {nu/ou:5.3f} | {ot:7.2f} {nt:7.2f} | {ou-ot:6.2f} {nu-nt:6.2f}")
PY
for t in old new; do
  TP=""; [ $t = old ] && TP=/tmp/tpl-old-root/templates
  QJIT_TEMPLATE_PATH=$TP QJIT_CACHE_DIR=/tmp/qc-$t timeout 100 $Q bench --scheme w4ax --shapes 4096x4096,4096x14336 --m 1,16,256,1024,4096 --no-peers --reps 20 --csv $O/$t-w4ax.csv > $O/$t-w4ax.txt 2>&1
  QJIT_TEMPLATE_PATH=$TP QJIT_CACHE_DIR=/tmp/qc-$t-bf timeout 100 $Q bench --dtype bf16 --shapes 4096x4096,4096x14336 --m 1,16,256,1024,4096 --no-peers --reps 20 --csv $O/$t-bf16.csv > $O/$t-bf16.txt 2>&1
done
for f in w4ax bf16; do echo "== $f (us: old new)"; paste -d, <(cut -d, -f1-4 $O/old-$f.csv) <(cut -d, -f4 $O/new-$f.csv) | grep -v "^N" | head -30 | tr '\n' ' '; echo; done
echo "timing done $(( $(date +%s) - T0 )) s"
lane() {
  local name=$1; shift
  for c in "$@"; do
    left=$(( 580 - ($(date +%s) - T0) )); [ $left -lt 20 ] && { echo "no time for $c" > $O/gpu-$c.txt; continue; }
    (cd build-dev && QJIT_CACHE_DIR=/tmp/qt-$name CK_RUN_CASE=$c CK_DEFAULT_TIMEOUT=600 timeout $left ./test_gpu > $O/gpu-$c.txt 2>&1; echo "rc=$?" >> $O/gpu-$c.txt)
  done
}
lane a misc &
lane b w4ax w4axs &
QJIT_TEST_SCHEMES=w4a8-lqq,w4a8-qoq,w4a4 lane c llama &
lane d bf16 &
wait
for c in misc w4ax w4axs llama bf16; do echo "== $c: $(grep -E 'Checks' $O/gpu-$c.txt) $(tail -n 1 $O/gpu-$c.txt) exact lines $(grep -c 'acc exact' $O/gpu-$c.txt)"; grep -E ":F:|:E:" $O/gpu-$c.txt | head -5 | cut -c1-400; done
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c3.tgz .
