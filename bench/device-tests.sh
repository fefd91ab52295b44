#!/usr/bin/env bash
# On the GPU machine (through the device tool): build, run the whole test
# suite (GPU tests included), then `qjit demo` twice (cold cache, then warm).
# Logs go to $OUT (or ./out). Usage, from the project root:
#   eval "$(bash .devdeps/device-unpack .devdeps)"; bash bench/device-tests.sh
set -uo pipefail
out=${OUT:-out}
mkdir -p "$out"
{
  echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
  nproc
} | tee "$out/device.txt"
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$out/cmake.log" 2>&1 || { tail -40 "$out/cmake.log"; exit 1; }
cmake --build build-dev -j "$(nproc)" >"$out/build.log" 2>&1 || { grep -E "error|warning" "$out/build.log" | head -40; exit 1; }
grep -c warning "$out/build.log" | sed 's/^/build warnings: /'
export QJIT_CACHE_DIR=/tmp/qjit-device-cache
rm -rf "$QJIT_CACHE_DIR"
(cd build-dev && ctest --output-on-failure -j 4 ${CTEST_ARGS:-}) >"$out/ctest.log" 2>&1
rc=$?
grep -E "tests passed|Failed|\*\*\*|Test +#" "$out/ctest.log" | tail -20
if [ -z "${SKIP_DEMO:-}" ]; then
  rm -rf "$QJIT_CACHE_DIR"
  ./build-dev/qjit demo --seed 1 2>&1 | tee "$out/demo-cold.log"
  ./build-dev/qjit demo --seed 2 2>&1 | tee "$out/demo-warm.log"
fi
exit $rc
