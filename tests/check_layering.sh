#!/usr/bin/env bash
# Includes flow one way: dsl/base <- dsl/ir <- dsl <- lowering <- backends. Prints each
# include that breaks it.
set -u
status=0
# check FOLDER ALLOWED: every project include in FOLDER (recursively) must start with one of
# the ALLOWED prefixes (an extended regular expression of alternatives).
check() {
  local folder=$1 allowed=$2
  local hits
  hits=$(grep -rnE '#include "[^"]+"' "$folder" 2>/dev/null \
         | grep -vE "#include \"(${allowed})/" \
         | grep -E '#include "(dsl|lowering|backends|apps|tests|tutorials)/')
  if [ -n "$hits" ]; then
    echo "$folder may include only ${allowed//|/, }:"
    echo "$hits"
    status=1
  fi
}
check dsl/base 'dsl/base'
check dsl/ir 'dsl/base|dsl/ir'
check dsl 'dsl'
check lowering 'dsl|lowering'
check backends 'dsl|lowering|backends'
# Devices launch compiled kernels: their interface needs no compiler IR.
for header in backends/runtime/Device.h backends/runtime/CompiledKernel.h; do
  hits=$(grep -nE '#include "(dsl/ir|lowering)/' "$header")
  if [ -n "$hits" ]; then
    echo "$header must not include compiler IR (dsl/ir, lowering):"
    echo "$hits"
    status=1
  fi
done
[ $status -eq 0 ] && echo "layering: dsl/base <- dsl/ir <- dsl <- lowering <- backends holds"
exit $status
