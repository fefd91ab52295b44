#!/bin/bash
# Session 45 call 5: prefetch.tensormap of the TMA pipe's tensor maps by thread 0 at the kernel's start (branch
# wip-tmap-prefetch). Calls 3-4 found every TMA kernel's first K tile landing 3.2-3.8 us after the CTA starts
# (main loop from ~0.9 us). Prediction: the descriptor fetch is part of that first copy's wait; the prefetch
# overlaps it with the barriers' setup: K tile 0 lands 0.2-0.5 us earlier; GEMM alone -2..-5 % at 10-20 us, less
# on longer kernels; exact (a prefetch changes no data).
T0=$(date +%s)
O=/tmp/o5; rm -rf $O; mkdir -p $O
cp .devdeps/s45c5.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli qjit_stamps test_gpu > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
OLD=$PWD/.devdeps/tpl/M/templates NEW=$PWD/templates Q=$PWD/build-dev/qjit
for t in new old new2 old2; do
  TP=$NEW; case $t in old*) TP=$OLD;; esac
  QJIT_TEMPLATE_PATH=$TP QJIT_CACHE_DIR=/tmp/qB-${t%2} timeout 80 $Q bench --scheme w4a8-lqq --no-peers --shapes 4096x4096,12288x4096,4096x11008,8192x8192 --m 16,32,64,128,256,1024 --reps 20 --csv $O/bench-$t.csv > $O/bench-$t.txt 2>&1
  echo "bench $t rc=$? at $(( $(date +%s) - T0 )) s"
done
python3 - $O <<'PY'
import csv, sys, math
def rd(t): return {(int(x["N"]), int(x["K"]), int(x["M"])): (float(x["tokens_us"]), float(x["qjit_us"]), x["variant"]) for x in csv.DictReader(open(f"{sys.argv[1]}/bench-{t}.csv"))}
o, n, o2, n2 = rd("old"), rd("new"), rd("old2"), rd("new2")
r = []; rf = []
for k in sorted(o):
    a = min(o[k][0], o2[k][0]); b = min(n[k][0], n2[k][0])
    a1 = min(o[k][1], o2[k][1]); b1 = min(n[k][1], n2[k][1])
    r.append(b / a); rf.append(b1 / a1)
    print("%5dx%-5d M=%-4d tok old %7.2f/%7.2f new %7.2f/%7.2f  new/old %.3f  fwd new/old %.3f  %s" % (k + (o[k][0], o2[k][0], n[k][0], n2[k][0], b / a, b1 / a1, "tma" if "pipe=tma" in o[k][2] else o[k][2].split("pipe=")[1].split(";")[0])))
g = lambda v: math.exp(sum(map(math.log, v)) / len(v))
print("tok new/old geomean %.3f, forward %.3f over %d" % (g(r), g(rf), len(r)))
PY
python3 bench/stamps/instrument.py $OLD /tmp/iO/templates > /dev/null; python3 bench/stamps/instrument.py $NEW /tmp/iN/templates > /dev/null
for pt in "4096 4096 64" "4096 4096 256" "12288 4096 128"; do
  n=$(echo $pt | tr ' ' x)
  for t in O N; do QJIT_TEMPLATE_PATH=/tmp/i$t/templates QJIT_CACHE_DIR=/tmp/qi-$t timeout 60 build-dev/qjit_stamps $pt - 14 0 > $O/st-$t-$n.txt 2>&1; done
done
echo "stamps at $(( $(date +%s) - T0 )) s"
(cd build-dev && QJIT_CACHE_DIR=/tmp/qt CK_RUN_CASE=llama CK_DEFAULT_TIMEOUT=100 timeout 150 ./test_gpu > $O/gpu-can.txt 2>&1; echo "rc=$?" >> $O/gpu-can.txt)
echo "== gpu-can: $(grep -E '^[0-9]+%: Checks' $O/gpu-can.txt) $(tail -1 $O/gpu-can.txt) at $(( $(date +%s) - T0 )) s"; grep -E ":F:|:E:" $O/gpu-can.txt | head -5
tar -C $O -czf $OUT/c5.tgz .
