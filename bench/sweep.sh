#!/usr/bin/env bash
# Dispatch candidates of a scheme (issue 12): forced GEMM variants on the
# default shapes at the M of each bucket, no cuBLAS peers (their times are
# in the full table). On the GPU machine, from the project root, after a
# build into build-dev:  bash bench/sweep.sh SCHEME [GROUP...]   (SCHEME
# w8a8 or w4a8-is; CSVs and tables to $OUT; groups few m32 m64 m128, all by
# default; SHAPES=NxK,... narrows the shapes)
set -uo pipefail
out=${OUT:-out}
mkdir -p "$out"
Q=./build-dev/qjit
scheme=${1:?usage: bench/sweep.sh SCHEME [GROUP...]}
shift
case $scheme in
  w8a8) C="scheme=w8a8;g=0" ;;
  w4a8-is) C="scheme=w4a8-is;g=128" ;;
  *) echo "bench/sweep.sh: no candidates for scheme '$scheme' (w8a8, w4a8-is)" >&2; exit 2 ;;
esac
want=" ${*:-few m32 m64 m128} "
run() {   # run NAME MLIST VARIANT...
  local name=$1 m=$2; shift 2
  [[ $want == *" $name "* ]] || return 0
  local args=(${SHAPES:+--shapes "$SHAPES"})
  for v in "$@"; do args+=(--variant "$C;$v"); done
  $Q bench --scheme "$scheme" --no-peers --reps 20 --m "$m" "${args[@]}" --csv "$out/$name.csv" > "$out/$name.txt" 2>&1 \
    || { echo "$name failed"; tail -5 "$out/$name.txt"; }
}

# 8-bit weights stream twice the bytes and dequantize nothing (D.BUCKETS_W8).
if [[ $scheme == w8a8 ]]; then
  run few 1,4,16 \
    "pipe=decode;tile=8x16x64;warps=1x16;stages=4;split=1" \
    "pipe=decode;tile=8x16x64;warps=1x8;stages=4;split=1" \
    "pipe=decode;tile=16x32x64;warps=1x16;stages=4;split=1" \
    "pipe=decode;tile=16x32x64;warps=1x8;stages=4;split=1" \
    "pipe=multistage;tile=16x64x128;warps=1x4;stages=4;split=2" \
    "pipe=multistage;tile=16x64x128;warps=1x4;stages=4;split=4" \
    "pipe=multistage;tile=16x64x64;warps=1x4;stages=6;split=2" \
    "pipe=multistage;tile=16x128x128;warps=1x4;stages=4;split=2"
  run m32 16,32 \
    "pipe=multistage;tile=32x128x128;warps=1x4;stages=4;split=2" \
    "pipe=multistage;tile=32x128x128;warps=1x4;stages=4;split=4" \
    "pipe=multistage;tile=32x128x64;warps=1x4;stages=6;split=2" \
    "pipe=multistage;tile=32x64x128;warps=1x4;stages=4;split=2" \
    "pipe=multistage;tile=32x64x128;warps=1x4;stages=4;split=4" \
    "pipe=wgmma;tile=32x64x128;warps=1x4;stages=4;split=2;reduce=cluster" \
    "pipe=wgmma;tile=32x64x128;warps=1x4;stages=6;split=2;reduce=cluster" \
    "pipe=wgmma;tile=32x128x128;warps=1x8;stages=4;split=2"
  run m64 64 \
    "pipe=tma;tile=64x64x128;warps=1x4;stages=4;split=2" \
    "pipe=tma;tile=64x64x128;warps=1x4;stages=4;split=4" \
    "pipe=tma;tile=64x64x128;warps=1x4;stages=6;split=4" \
    "pipe=tma;tile=64x128x128;warps=1x8;stages=4;split=2" \
    "pipe=tma;tile=64x128x128;warps=1x8;stages=4;split=4" \
    "pipe=wgmma;tile=64x128x128;warps=1x8;stages=3;split=2" \
    "pipe=wgmma;tile=64x128x128;warps=1x8;stages=3;split=4" \
    "pipe=tma;tile=64x128x128;warps=1x8;stages=6;split=2"
  run m128 128 \
    "pipe=tma;tile=128x64x128;warps=1x4;stages=4;split=2;reduce=cluster" \
    "pipe=tma;tile=128x64x128;warps=1x4;stages=6;split=2;reduce=cluster" \
    "pipe=tma;tile=128x64x128;warps=1x4;stages=6;split=1" \
    "pipe=tma;tile=128x64x128;warps=1x4;stages=4;split=4" \
    "pipe=tma;tile=128x128x128;warps=1x8;stages=4;split=1" \
    "pipe=tma;tile=128x128x128;warps=1x8;stages=4;split=2;reduce=cluster" \
    "pipe=tma;tile=128x128x128;warps=1x8;stages=6;split=1" \
    "pipe=multistage;tile=128x128x64;warps=2x4;stages=4;split=1"
fi

# A per-group rescale (w4a8-is: INT32 group sums beside the accumulators)
# takes registers the 4-bit table's tiles were not chosen for.
if [[ $scheme == w4a8-is ]]; then
  run few 16 \
    "pipe=decode;tile=16x32x64;warps=1x16;stages=4;split=1" \
    "pipe=decode;tile=16x32x64;warps=1x8;stages=4;split=1" \
    "pipe=multistage;tile=16x128x128;warps=1x4;stages=4;split=2" \
    "pipe=multistage;tile=16x64x128;warps=1x4;stages=4;split=2" \
    "pipe=multistage;tile=32x64x128;warps=1x4;stages=4;split=2"
  run m32 32 \
    "pipe=multistage;tile=32x64x128;warps=1x4;stages=4;split=2" \
    "pipe=multistage;tile=32x64x128;warps=1x4;stages=4;split=4" \
    "pipe=multistage;tile=32x128x128;warps=1x4;stages=4;split=2" \
    "pipe=wgmma;tile=32x64x128;warps=1x4;stages=8;split=2;reduce=cluster" \
    "pipe=wgmma;tile=32x128x128;warps=1x8;stages=4;split=2"
  run m64 64 \
    "pipe=tma;tile=64x64x128;warps=1x4;stages=8;split=2" \
    "pipe=tma;tile=64x64x128;warps=1x4;stages=8;split=4" \
    "pipe=tma;tile=64x128x128;warps=1x8;stages=4;split=2" \
    "pipe=multistage;tile=64x128x128;warps=1x4;stages=3;split=2" \
    "pipe=multistage;tile=64x64x128;warps=1x4;stages=4;split=2"
  run m128 128 \
    "pipe=tma;tile=128x64x128;warps=1x4;stages=6;split=1" \
    "pipe=tma;tile=128x64x128;warps=1x4;stages=8;split=2;reduce=cluster" \
    "pipe=tma;tile=128x64x128;warps=1x4;stages=4;split=2" \
    "pipe=tma;tile=64x128x128;warps=1x8;stages=4;split=1" \
    "pipe=tma;tile=64x128x128;warps=1x8;stages=4;split=2" \
    "pipe=tma;tile=64x64x128;warps=1x4;stages=8;split=2"
fi
