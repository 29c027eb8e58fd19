#!/usr/bin/env bash
# Includes flow one way: dsl <- lowering <- backends. Prints each include that breaks it.
set -u
status=0
check() {
  local folder=$1 forbidden=$2
  local hits
  hits=$(grep -rnE "#include \"(${forbidden})/" "$folder" 2>/dev/null)
  if [ -n "$hits" ]; then
    echo "$folder must not include ${forbidden//|/ or }:"
    echo "$hits"
    status=1
  fi
}
check dsl 'lowering|backends|apps|tests|tutorials'
check lowering 'backends|apps|tests|tutorials'
check backends 'apps|tests|tutorials'
[ $status -eq 0 ] && echo "layering: dsl <- lowering <- backends holds"
exit $status
