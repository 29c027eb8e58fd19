#!/usr/bin/env bash
# Checks that a program calling generated pipelines needs libaicf_runtime and neither libaicf
# (the compiler) nor LLVM, at load time and in its undefined symbols.
set -u
program=$1
libs=$(ldd "$program") || { echo "ldd failed on $program"; exit 1; }
echo "$libs"
if ! grep -q 'libaicf_runtime' <<<"$libs"; then
  echo "FAIL: $program does not load libaicf_runtime"
  exit 1
fi
if grep -Eq 'libLLVM|libaicf\.so' <<<"$libs"; then
  echo "FAIL: $program loads the compiler (libaicf or LLVM)"
  exit 1
fi
runtime=$(grep -o '/[^ ]*libaicf_runtime[^ ]*' <<<"$libs" | head -1)
if ldd "$runtime" | grep -q libLLVM || nm -D --undefined-only "$runtime" | grep -qi llvm; then
  echo "FAIL: $runtime needs LLVM"
  exit 1
fi
echo "runtime only: $program and $runtime need no LLVM"
