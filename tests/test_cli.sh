#!/usr/bin/env bash
# test_cli.sh QJIT -- the qjit command refuses bad option values before any
# work (exit 2, a message naming the option and the text, nothing compiled
# or written), reports failed compiles as failures, and answers --version.
# CPU only: with no GPU, a command that got past its checks would fail later
# with "needs a GPU" (exit 1), so exit 2 proves the check came first.
set -u
Q=${1:?usage: test_cli.sh path/to/qjit}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 n=0
# expect RC WORDS -- ARGS...: exit status RC and WORDS in stdout+stderr.
expect() {
  local rc=$1 words=$2; shift 3
  n=$((n + 1))
  local out got
  out=$("$Q" "$@" 2>&1); got=$?
  if [ "$got" != "$rc" ] || [[ "$out" != *"$words"* ]]; then
    echo "FAIL: qjit $* -> exit $got (want $rc), output lacks '$words':"; echo "$out" | head -5
    fails=$((fails + 1))
  fi
}
cache="$tmp/cache"
expect 0 "qjit " -- --version
expect 0 "qjit " -- version
expect 1 "'banana' is not an architecture name" -- compile "g=64" --arch banana --cache-dir "$cache"
expect 1 "1 of 2 variant(s) compiled or cached, 1 FAILED" -- compile "g=64;tile=1x1x1" "g=64" --arch sm_90a --cache-dir "$cache"
expect 0 "1 variant(s) compiled or cached" -- compile "g=64" --threads 3 --arch sm_90a --cache-dir "$cache"
# A short or empty key is listed as the variant it names, defaults filled in.
expect 0 ";arch=sm_90a;epi=f16;g=64;kernel=gemm;" -- compile "g=64" --arch sm_90a --cache-dir "$cache"
expect 0 ";scheme=w4a8-lqq;" -- compile "" --arch sm_90a --cache-dir "$cache"
expect 2 "qjit compile: --threads takes a count (0..1024, 0: every CPU), not '-1'" -- compile "g=64" --threads -1 --arch sm_90a
expect 0 "0 entries" -- cache ls --cache-dir "$tmp/empty"
expect 0 "0 tuning record(s)" -- cache export "$tmp/records.qjr" --cache-dir "$tmp/empty"
expect 0 "0 tuning record(s) stored" -- cache import "$tmp/records.qjr" --cache-dir "$tmp/empty"
printf 'not records\n' > "$tmp/other.txt"
expect 1 "is not an export of tuning records" -- cache import "$tmp/other.txt" --cache-dir "$tmp/empty"
expect 2 "qjit cache import: needs a FILE" -- cache import --cache-dir "$tmp/empty"
expect 2 "qjit compile: --arch needs a value" -- compile "g=64" --arch
expect 2 "qjit compile: --cache-dir needs a value" -- compile "g=64" --arch sm_90a --cache-dir
expect 2 "qjit gen: --arch needs a value" -- gen "g=64" --arch
expect 2 "qjit cache: --cache-dir needs a value" -- cache verify --cache-dir
expect 2 "--n: 'abc' is not an integer" -- demo --n abc --cache-dir "$tmp/demo"
expect 2 "--k: '0' must be at least 64" -- demo --k 0 --cache-dir "$tmp/demo"
expect 2 "group 100 cannot be packed" -- demo --group 100 --cache-dir "$tmp/demo"
expect 2 "--m: '0' must be at least 1" -- demo --m 0 --cache-dir "$tmp/demo"
expect 2 "'w4a2' is not a scheme" -- demo --scheme w4a2 --cache-dir "$tmp/demo"
expect 2 "--sparsity: '2' is not a budget in [0, 1]" -- demo --sparsity 2 --cache-dir "$tmp/demo"
expect 2 "w4a8-is takes no sparse residual" -- demo --scheme is --sparsity 0.1 --cache-dir "$tmp/demo"
expect 2 "--sparsity: budget '.1' is given twice" -- bench --sparsity 0.1,.1
expect 2 "--group 100: a group is 0 (per channel) or a multiple of 64" -- bench --group 100
expect 2 "--layers: '0' must be at least 1" -- bench --layers 0
expect 2 "--dtype: 'fp32' is not a dtype (f16 or bf16)" -- bench --layers 2 --dtype fp32
expect 2 "no second --variant" -- bench --layers 2 --variant g=64 --variant g=128
expect 2 "shape 15x64 cannot be packed" -- bench --shapes 15x64
expect 2 "--variant 'foo=1': unknown field 'foo'" -- bench --variant foo=1
expect 2 "--csv '$tmp/no/such/dir/x.csv' cannot be written" -- bench --csv "$tmp/no/such/dir/x.csv"
expect 2 "nothing to do" -- tune --cache-dir "$tmp/tune"
expect 2 "--reps takes a count (1..1000), not '0'" -- tune --shapes 4096x4096 --reps 0 --cache-dir "$tmp/tune"
expect 2 "--scheme: unknown scheme 'w4a2'" -- tune --shapes 4096x4096 --scheme w4a2 --cache-dir "$tmp/tune"
expect 2 "layer 4096x100 cannot be packed" -- tune --shapes 4096x100 --cache-dir "$tmp/tune"
expect 2 "cannot be packed with w8a8 at group 128" -- tune --shapes 4096x4096 --scheme w8a8 --group 128 --cache-dir "$tmp/tune"
expect 2 "--m: 70000 is more than 65536 tokens" -- tune --shapes 4096x4096 --m 1,70000 --cache-dir "$tmp/tune"
expect 2 "--dtype takes f16 or bf16, not 'fp8'" -- tune --shapes 4096x4096 --dtype fp8 --cache-dir "$tmp/tune"
expect 0 "0 tuning record(s)" -- tune --export "$tmp/tuned.qjr" --cache-dir "$tmp/empty"
expect 0 "0 tuning record(s) of $tmp/tuned.qjr stored" -- tune --import "$tmp/tuned.qjr" --cache-dir "$tmp/empty"
expect 1 "is not an export of tuning records" -- tune --import "$tmp/other.txt" --cache-dir "$tmp/empty"
expect 0 "0 variant(s) compiled or cached" -- compile --records --arch sm_90a --cache-dir "$tmp/empty"
if [ -e "$tmp/tune" ]; then echo "FAIL: a refused tune created its cache folder"; fails=$((fails + 1)); fi
if [ -e "$tmp/demo" ]; then echo "FAIL: a refused demo created its cache folder"; fails=$((fails + 1)); fi
echo "$((n - fails)) of $n CLI checks passed"
[ "$fails" = 0 ]
