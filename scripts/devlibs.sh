#!/usr/bin/env bash
# Fills .devlibs/ (git-ignored) with what the GPU machine lacks to build cablesim: HDF5 and Check
# through ../shared/device/make-devlibs.sh, then cJSON (headers, library, pkg-config file), which
# that script does not copy. Carry ".devlibs" with the run (scripts/gpu_*.sh use it).
# Usage, from the project root: scripts/devlibs.sh
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .git/info # make-devlibs.sh records .devlibs in .git/info/exclude
../shared/device/make-devlibs.sh
scripts/deps.sh build >/dev/null # libcjson-dev
dst=.devlibs
mkdir -p "$dst/include/cjson"
cp /usr/include/cjson/cJSON.h "$dst/include/cjson/"
real=$(readlink -f /usr/lib/x86_64-linux-gnu/libcjson.so)
cp -L "$real" "$dst/lib/"
ln -sf "$(basename "$real")" "$dst/lib/libcjson.so"
ln -sf "$(basename "$real")" "$dst/lib/$(objdump -p "$real" | awk '/SONAME/{print $2}')"
cat >"$dst/lib/pkgconfig/libcjson.pc" <<PC
prefix=\${pcfiledir}/../..
libdir=\${prefix}/lib
includedir=\${prefix}/include
Name: libcjson
Description: Ultralightweight JSON parser in ANSI C
Version: $(pkg-config --modversion libcjson)
Libs: -L\${libdir} -lcjson
Cflags: -I\${includedir} -I\${includedir}/cjson
PC
echo "devlibs: $(du -sh "$dst" | cut -f1) in $dst (HDF5, Check, cJSON)"
