#!/bin/bash
# Session 41 call 3 (bisecting call 2's CP tree: CD the MMA warps' code the dense kernel's, no vote; CDW and the
# residual warp never arrives, one arrival a phase; CDWK and the dense kernel's even K slices): where the sparse kernels' fixed cost lies. Per-CTA stamps (rho = 0.01, the table's variant)
# with main's templates (M) and three diagnostic trees that give wrong sums (timing only): C0 the MMA warps never
# take the residual path (rbits = 0: their code is the dense kernel's), P0 the residual warp looks nothing up
# (presence word 0, no copies: only its arrival), CP both. Dense (rho 0) at the table's stages and at the sparse
# kernel's stage count.
orig=$PWD; rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xzf .devdeps/tree.tgz && cd /tmp/src || exit 1
T0=$(date +%s)
O=/tmp/o3; rm -rf $O; mkdir -p $O
cp $orig/.devdeps/s41c3.sh $O/script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
(cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQJIT_WERROR=ON >/dev/null && cmake --build build-dev -j16 --target qjit_cli qjit_stamps > $O/build.txt 2>&1) || { echo BUILD FAILED; tail $O/build.txt; exit 1; }
echo "built $(( $(date +%s) - T0 )) s"
for t in M CP CD CDW CDWK; do python3 bench/stamps/instrument.py $orig/.devdeps/tpl/$t/templates /tmp/st-$t/templates > /dev/null || echo "instrument $t failed"; done
one() {  # tag tree N K M variant rho
  QJIT_CACHE_DIR=/tmp/qc-$2 QJIT_TEMPLATE_PATH=/tmp/st-$2/templates timeout 60 build-dev/qjit_stamps $3 $4 $5 "$6" 24 $7 > $O/st-$1.txt 2>&1
  python3 bench/stamps/phases.py $O/st-$1.txt | awk '/ launch /{p = / launch 22:/} p' > $O/ph-$1.txt
  ev=$(awk '/^rep/ && $2 >= 2 { print $4 }' $O/st-$1.txt | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
  printf "%-28s event %8s us  %s  %s\n" "$1" "$ev" "$(grep -E 'gap tile (0->1|8->9)' $O/ph-$1.txt | awk '{printf "gap %s %s ", $3, $7}')" "$(grep -E 'CTA duration' $O/ph-$1.txt | awk '{print "CTA med", $6}')"
}
D64="actq=kernel;arch=sm_90a;epi=f16;g=128;kernel=gemm;pipe=tma;producer=wg;scheme=w4a8-lqq;tile=64x64x128;warps=1x4;wu8=1"
for sh in "4096 4096 64" "8192 8192 64" "12288 4096 128" "12288 4096 64"; do
  set -- $sh; tag=${1}x${2}m$3
  one $tag-dense M $1 $2 $3 - 0
  for t in M CP CD CDW CDWK; do one $tag-$t $t $1 $2 $3 - 0.01; done
done
echo "seconds: $(( $(date +%s) - T0 ))"
tar -C $O -czf $OUT/c3.tgz .
