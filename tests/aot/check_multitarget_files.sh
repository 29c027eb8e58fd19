#!/bin/sh
# A generator program asked for several targets at once: one library and header, and the
# stmt and PTX files once per target (PTX for the target with a GPU only); a target given
# twice is refused.
set -eu
gen=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$gen" -g rms_norm -o "$dir" -e static_library,c_header,stmt,ptx,assembly \
    target=x86-64-v3-cuda-sm_80,x86-64 threads=64
for f in rms_norm.a rms_norm.h rms_norm.s rms_norm.x86-64-v3-cuda-sm_80.stmt \
    rms_norm.x86-64.stmt rms_norm.x86-64-v3-cuda-sm_80.ptx; do
    test -s "$dir/$f" || { echo "missing $f"; exit 1; }
done
test ! -e "$dir/rms_norm.x86-64.ptx" || { echo "a PTX file for the CPU build"; exit 1; }
grep -q "^\.target sm_80" "$dir/rms_norm.x86-64-v3-cuda-sm_80.ptx"
grep -q "x86-64-v3-cuda-sm_80 and x86-64" "$dir/rms_norm.h"
if "$gen" -g rms_norm -o "$dir" target=x86-64,x86-64 2>"$dir/err"; then
    echo "a target given twice was accepted"; exit 1
fi
grep -q "rms_norm is built twice for x86-64" "$dir/err"
echo ok
