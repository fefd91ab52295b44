#!/bin/bash
# Session 45 call 3 (issue 14): the phases of dense (D), sparse at rho 0.01 / 0.1 (S1, S10) and trees X / Xc at
# 0.01, every kernel instrumented the same way (K-tile landing stamps; slot 30 = the K tiles whose stage carries a
# residual block). Call 2 found X and Xc at the same per-tile pace with the CTA's time set by when its first K
# tile lands (3.2-3.8 us after the CTA starts, varying 0.3-0.5 us launch to launch). Prediction: S's excess
# over D is mostly in "K tile 0 landed" (the residual warp's first rmask lookups and copies, a new page each,
# gate the first arrival), not in the per-tile pace.
T0=$(date +%s)
O=/tmp/o3; rm -rf $O; mkdir -p $O
cp .devdeps/s45c3.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli qjit_stamps > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
bash .devdeps/s45mk.sh templates /tmp/tr45 > /dev/null || exit 1
python3 bench/stamps/instrument.py templates /tmp/tr45/M/templates > /dev/null
python3 - /tmp/tr45/M/templates <<'PY'
import sys, os
p = os.path.join(sys.argv[1], 'gemm_tma_step.cu'); s = open(p).read()
old = '        if (kt < 24) QS(3 + kt);\n'
new = old + '''//% if p.sparse == 1 then
        if (tid == 0 && kt < 32 && qs_cta() < QS_MAXCTA && lds32(smem_base + ({{ it }} % STAGES) * STAGE_BYTES + RB_OFF) != 0u)
            qs_buf[qs_cta()][30] |= 1u << kt;
//% end
'''
assert s.count(old) == 1
open(p, 'w').write(s.replace(old, new))
PY
echo "built $(( $(date +%s) - T0 )) s"
for pt in "4096 4096 64" "4096 4096 256" "8192 8192 128" "12288 4096 128"; do
  n=$(echo $pt | tr ' ' x)
  for run in "D M 0" "S1 M 0.01" "S10 M 0.1" "X X 0.01" "Xc Xc 0.01"; do
    set -- $run
    QJIT_TEMPLATE_PATH=/tmp/tr45/$2/templates QJIT_CACHE_DIR=/tmp/q45-$2 timeout 100 build-dev/qjit_stamps $pt - 12 $3 > $O/st-$1-$n.txt 2>&1
  done
  echo "$n at $(( $(date +%s) - T0 )) s"
done
tar -C $O -czf $OUT/c3.tgz .
