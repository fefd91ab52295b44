#!/usr/bin/env bash
# On the GPU machine: the GPU suite (test_gpu) in lanes run side by side -- a
# test case each, split per scheme where it is large -- because the suite is
# bound by NVRTC and the CPU references, not the GPU (session 49: nine lanes
# ran 414 checks in 73 s where one ran 230 in 170 s). Usage, from the project
# root after a build into build-dev:
#   bash bench/gpu-lanes.sh [LANES_AT_ONCE] [SECONDS_A_LANE] [SECONDS_IN_ALL]
# With SECONDS_IN_ALL a lane gets no more than what is left of it (a device
# call has a hard limit; the summary is written either way) and a lane that
# would start with under 20 s left is recorded as not run (rc=notrun).
# The longest cases run as several shares at once (QJIT_TEST_SHARD=I/N, lane
# NAME.I). LANES=REGEX runs only the lanes whose names match (grep -E);
# RERUN=FILE (an earlier gpu.txt) only those that did not pass in it (ran out
# of time, were not run, failed or crashed).
# Writes $OUT/gpu.txt (a line a lane: exit status, exact checks, Check's
# summary, the first failures) and $OUT/gpu-all.txt (every lane's log).
set -uo pipefail
out=${OUT:-out}
mkdir -p "$out"
at_once=${1:-14}
secs=${2:-500}
deadline=$(( $(date +%s) + ${3:-100000} ))
logs=$(mktemp -d)
if [[ -n ${RERUN:-} ]]; then
    names=$(grep -E '^== ' "$RERUN" | grep -vE ': rc=(0|77) ' | sed -E 's/^== ([^:]+):.*/\1/' | sed 's/\./\\./g' | paste -sd '|')
    [[ -n $names ]] || { echo "gpu-lanes: every lane of $RERUN passed: nothing to rerun"; exit 0; }
    LANES="^($names)$"
    echo "gpu-lanes: rerunning $LANES"
fi
lane() {   # lane NAME CASE SCHEMES SHARD
    local left=$(( deadline - $(date +%s) ))
    (( left < secs )) || left=$secs
    if (( left < 20 )); then echo "rc=notrun" > "$logs/$1.txt"; return; fi
    QJIT_CACHE_DIR=/tmp/qjit-lane-$1 QJIT_TEST_SCHEMES=$3 QJIT_TEST_SHARD=$4 CK_RUN_CASE=$2 CK_DEFAULT_TIMEOUT=$left \
        timeout "$left" ./build-dev/test_gpu > "$logs/$1.txt" 2>&1
    echo "rc=$?" >> "$logs/$1.txt"
}
export -f lane
export secs logs deadline
lanes() {  # NAME CASE SCHEMES SHARES
    # the lanes that run longest (one case for every scheme at once) start first
    echo "sparse sparse '' 8"; echo "misc misc '' 4"; echo "w4ax w4ax '' 4"
    for c in sparse_llama int4_mma w4axs tuning; do echo "$c $c '' 1"; done
    for s in w4a8-lqq w4a8-qoq w4a4; do echo "sk-$s sk $s 4"; done
    for s in w4a8-lqq w4a8-qoq w4a8-is w8a8; do echo "oom-$s oom $s 1"; done
    for s in w4a8-lqq w4a8-qoq w4a8-is w8a8 w4a4; do
        for c in llama bf16 odd pipes_a pipes_b bias; do echo "$c-$s $c $s 1"; done
    done
    for s in w4a8-is w8a8; do echo "sk-$s sk $s 1"; done
    for c in bf16 bias; do echo "$c-2part $c w4ax,w4ax-s 1"; done   # the two-part layers of those cases
}
lanes | while read -r name case schemes shares; do
    for ((i = 0; i < shares; i++)); do
        n=$name; ((shares == 1)) || n=$name.$i
        [[ $n =~ ${LANES:-.} ]] && echo "$n $case $schemes $i/$shares"
    done
done | xargs -P "$at_once" -L 1 bash -c 'lane "$0" "$1" "$2" "$3"'
for f in "$logs"/*.txt; do
    echo "== $(basename "$f" .txt): $(tail -1 "$f") exact $(grep -c 'exact' "$f"); $(grep -E '^[0-9]+%' "$f")"
    grep -E ":F:|:E:|mismatch" "$f" | head -5
done | tee "$out/gpu.txt"
cat "$logs"/*.txt > "$out/gpu-all.txt"
# Exit 0 when no lane failed, ran out of time or crashed (77: skipped, no GPU).
! grep -qE ":F:|:E:|mismatch" "$out/gpu.txt" && ! grep -oE "rc=[0-9a-z]+" "$out/gpu.txt" | grep -qvE "^rc=(0|77)$"
