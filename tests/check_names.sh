#!/usr/bin/env bash
# The names AICF derives for stages and loops ("f.s0.x") are built and taken apart in
# dsl/Names.cpp only. Prints each place elsewhere in the library that spells their
# separators in code.
set -u
hits=$(grep -rnE '"\.s"|"\.s[0-9]|find\("\.s|"\.v"|"\.prefetch\.|"\.steady_' dsl lowering backends \
         --include='*.cpp' --include='*.h' | grep -v '^dsl/Names\.' \
       | grep -v '^dsl/GeneratorDriver\.cpp:.*"assembly", "\.s"')  # a file extension
if [ -n "$hits" ]; then
  echo "Derived names spelled outside dsl/Names.cpp (build or parse them through dsl/Names.h):"
  echo "$hits"
  exit 1
fi
echo "names: stage and loop names are spelled in dsl/Names.cpp only"
