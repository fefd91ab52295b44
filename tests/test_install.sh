#!/usr/bin/env bash
# test_install.sh BUILD SOURCE -- `cmake --install` into an empty prefix, then
# programs built out of tree against it: tests/consumer through
# find_package(qjit CONFIG) (the shared library, and the static one run from
# the prefix's bin/), and the same source through pkg-config. Each must find
# the installed templates (not the source tree's), generate, compile with
# NVRTC and run the CPU reference; the installed CLI too. CPU only.
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
templates=$(cd "$prefix/share/qjit/templates" && pwd -P)
for f in include/qjit.h share/qjit/templates/dispatch.lua; do
  [ -f "$prefix/$f" ] || { echo "not installed: $f"; exit 1; }
done
lib=$(ls -d "$prefix"/lib*/ | head -1)
for f in libqjit.so libqjit.a cmake/qjit/qjitConfig.cmake cmake/qjit/qjitTargets.cmake pkgconfig/qjit.pc; do
  [ -e "$lib/$f" ] || { echo "not installed: $lib$f"; exit 1; }
done
export QJIT_CACHE_DIR=$tmp/cache
unset QJIT_BUILTIN_TEMPLATES QJIT_TEMPLATE_PATH
cmake -S "$src/tests/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$tmp/consumer" >/dev/null
"$tmp/consumer/consumer" "$templates"
# A program linked with the static library finds the templates from its own
# folder: installed in the prefix's bin/.
cp "$tmp/consumer/consumer_static" "$prefix/bin/"
"$prefix/bin/consumer_static" "$templates"
# pkg-config
PKG_CONFIG_PATH="$lib/pkgconfig" cc -o "$tmp/pc_consumer" "$src/tests/consumer/consumer.c" \
  $(PKG_CONFIG_PATH="$lib/pkgconfig" pkg-config --cflags --libs qjit) -Wl,-rpath,"$lib"
"$tmp/pc_consumer" "$templates"
# The installed CLI.
version=$("$prefix/bin/qjit" version)
grep -qx "templates: $templates" <<<"$version" || { echo "qjit version: not the installed templates: $version"; exit 1; }
source=$("$prefix/bin/qjit" gen "scheme=w4a8-qoq;g=64;arch=sm_90a")
grep -q "^// qjit variant: " <<<"$source" || { echo "qjit gen failed"; exit 1; }
echo "install: ok"
