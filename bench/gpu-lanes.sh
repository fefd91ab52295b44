#!/usr/bin/env bash
# On the GPU machine: the GPU suite (test_gpu) in lanes run side by side -- a
# test case each, split per scheme where it is large -- because the suite is
# bound by NVRTC and the CPU references, not the GPU (session 49: nine lanes
# ran 414 checks in 73 s where one ran 230 in 170 s). Usage, from the project
# root after a build into build-dev:
#   bash bench/gpu-lanes.sh [LANES_AT_ONCE] [SECONDS_A_LANE]
# Writes $OUT/gpu.txt (a line a lane: exit status, exact checks, Check's
# summary, the first failures) and $OUT/gpu-all.txt (every lane's log).
set -uo pipefail
out=${OUT:-out}
mkdir -p "$out"
at_once=${1:-14}
secs=${2:-500}
logs=$(mktemp -d)
lane() {   # lane NAME CASE SCHEMES
    QJIT_CACHE_DIR=/tmp/qjit-lane-$1 QJIT_TEST_SCHEMES=$3 CK_RUN_CASE=$2 CK_DEFAULT_TIMEOUT=$secs \
        timeout "$secs" ./build-dev/test_gpu > "$logs/$1.txt" 2>&1
    echo "rc=$?" >> "$logs/$1.txt"
}
export -f lane
export secs logs
{
    for s in w4a8-lqq w4a8-qoq w4a8-is w8a8 w4a4; do
        for c in pipes_a pipes_b bf16 bias odd llama sk; do echo "$c-$s $c $s"; done
    done
    for c in bf16 bias; do echo "$c-2part $c w4ax,w4ax-s"; done   # the two-part layers of those cases
    for c in sparse sparse_llama misc w4ax int4_mma w4axs tuning; do echo "$c $c ''"; done
} | xargs -P "$at_once" -L 1 bash -c 'lane "$0" "$1" "$2"'
for f in "$logs"/*.txt; do
    echo "== $(basename "$f" .txt): $(tail -1 "$f") exact $(grep -c 'exact' "$f"); $(grep -E '^[0-9]+%' "$f")"
    grep -E ":F:|:E:|mismatch" "$f" | head -5
done | tee "$out/gpu.txt"
cat "$logs"/*.txt > "$out/gpu-all.txt"
# Exit 0 when no lane failed, ran out of time or crashed (77: skipped, no GPU).
! grep -qE ":F:|:E:|mismatch" "$out/gpu.txt" && ! grep -oE "rc=[0-9]+" "$out/gpu.txt" | grep -qvE "^rc=(0|77)$"
