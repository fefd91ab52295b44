#!/bin/bash
# Session 38 call 3 (H200, main 5cd53e6): per-CTA timelines of the small-M 4096-wide kernels, undistorted: the
# instrumented templates (tpl/S: thread 0 stamps clock64 at fixed points, no call in the kernel, so the wgmmas are
# not serialized; the last CTA writes every CTA's stamps into Y) run by a harness (stamps.c: the GEMM alone through
# the public API, a forced variant, L2 flushed before each launch), and the same harness on the plain templates for
# each variant's event time.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
T0=$(date +%s)
O=/tmp/o3; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s38c3.sh $O/script.sh; cp $orig/.devdeps/qsan.py $orig/.devdeps/stamps.c $O/
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
gcc -O2 -Wall -I include -I /usr/local/cuda/include $orig/.devdeps/stamps.c -o $O/stamps -L build-dev -lqjit -L /usr/local/cuda/lib64/stubs -lcuda -Wl,-rpath,$PWD/build-dev || { echo HARNESS FAILED; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
TS=$orig/.devdeps/tpl/S/templates
B="pipe=tma;scheme=w4a8-lqq;wu8=1"
one() { # name N K M variant
  QJIT_CACHE_DIR=/tmp/qS QJIT_TEMPLATE_PATH=$TS timeout 60 $O/stamps $2 $3 $4 "$5" 24 > $O/st-$1.txt 2>&1; echo "st $1 rc=$?"
  QJIT_CACHE_DIR=/tmp/qP timeout 60 $O/stamps $2 $3 $4 "$5" 24 > $O/plain-$1.txt 2>&1; echo "plain $1 rc=$?"
  python3 - $O/st-$1.txt $O/plain-$1.txt <<'PY'
import sys, re, statistics as st
for f in sys.argv[1:]:
    ev = [float(m.group(1)) for m in re.finditer(r"event ([0-9.]+) us", open(f).read())][4:]
    print(f"   {f.split('/')[-1]}: event median {st.median(ev):.2f} us, min {min(ev):.2f} ({len(ev)} reps)" if ev else f"   {f}: no events")
PY
}
one m64a 4096 4096 64 "$B;tile=64x64x128;warps=1x4;stages=8;split=2;reduce=cluster"
one m64b 4096 4096 64 "$B;tile=64x64x128;warps=1x4;stages=8;split=2;reduce=global"
one m128a 4096 4096 128 "$B;tile=64x128x128;warps=1x8;stages=4;split=2;reduce=cluster"
one m128b 4096 4096 128 "$B;tile=128x64x128;warps=1x4;stages=8;split=2;reduce=cluster"
one m128d 4096 4096 128 "$B;tile=64x64x128;warps=1x4;stages=8;split=1"
one w128 12288 4096 128 "$B;tile=128x128x128;warps=1x8;stages=8;split=1;producer=wg"
echo "runs done at $(( $(date +%s) - T0 )) s"
python3 $O/qsan.py $O/st-*.txt > $O/stamps.txt 2>&1; echo "qsan rc=$?"
awk '/ launch /{p = / launch 22:/} p' $O/stamps.txt
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c3.tgz .
