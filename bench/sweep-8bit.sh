#!/usr/bin/env bash
# W8A8 dispatch candidates (issue 12): forced GEMM variants on the default
# shapes at the M of each bucket, no cuBLAS peers (their times are in the
# full table). On the GPU machine, from the project root, after a build
# into build-dev:  bash bench/sweep-8bit.sh [GROUP...]   (CSVs and tables to
# $OUT; groups few m32 m64 m128, all by default; SHAPES=NxK,... narrows the
# shapes)
set -uo pipefail
out=${OUT:-out}
mkdir -p "$out"
Q=./build-dev/qjit
C="scheme=w8a8;g=0"
want=" ${*:-few m32 m64 m128} "
run() {   # run NAME MLIST VARIANT...
  local name=$1 m=$2; shift 2
  [[ $want == *" $name "* ]] || return 0
  local args=(${SHAPES:+--shapes "$SHAPES"})
  for v in "$@"; do args+=(--variant "$C;$v"); done
  $Q bench --scheme w8a8 --no-peers --reps 20 --m "$m" "${args[@]}" --csv "$out/$name.csv" > "$out/$name.txt" 2>&1 \
    || { echo "$name failed"; tail -5 "$out/$name.txt"; }
}
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
