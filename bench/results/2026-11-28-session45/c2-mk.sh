#!/bin/bash
# mk.sh TEMPLATES OUTDIR: trees X, Xc, Xe (X with the residual warp's arrival before its copies), each instrumented
# (bench/stamps/instrument.py) plus slot 30 = the K tiles (kt < 32) whose stage carries a residual block.
set -e
T=$1; O=$2; B=$(dirname $0)
rm -rf $O; mkdir -p $O/raw
python3 bench/stamps/trees.py $T $O/raw X Xc > /dev/null
cp -r $O/raw/X $O/raw/Xe
python3 - $O/raw/Xe/templates <<'PY'
import sys, os
p = os.path.join(sys.argv[1], 'gemm_tma.cu'); s = open(p).read()
old = '''    if (src && R_HEAD(lane))
        bulk_load(stage + R_OFF + R_PLACE(lane) * 512, src, R_SLABS * R_KSTEPS * 512, full);
    if (lane == 0) {
        sts32(stage + RB_OFF, present);
        mbar_expect_tx(full, __popc(present) * 512);
    }
'''
new = '''    if (lane == 0) {
        sts32(stage + RB_OFF, present);
        mbar_expect_tx(full, __popc(present) * 512);
    }
    __syncwarp();
    if (src && R_HEAD(lane))
        bulk_load(stage + R_OFF + R_PLACE(lane) * 512, src, R_SLABS * R_KSTEPS * 512, full);
'''
assert s.count(old) == 1
open(p, 'w').write(s.replace(old, new))
PY
for t in X Xc Xe; do
  python3 bench/stamps/instrument.py $O/raw/$t/templates $O/$t/templates > /dev/null
  python3 - $O/$t/templates <<'PY'
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
done
echo made $O
