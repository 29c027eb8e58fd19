#!/usr/bin/env bash
# The C++ sources follow the repository's .clang-format, as Debian 12's clang-format 14
# applies it (scripts/install_deps.sh installs it). Prints the files that do not; fix them
# with `clang-format-14 -i FILE`.
set -u
cd "$(dirname "$0")/.."
formatter=$(command -v clang-format-14 || command -v clang-format)
if [ -z "$formatter" ]; then
  echo "clang-format-14 is not installed (scripts/install_deps.sh installs it)"
  exit 1
fi
mapfile -t files < <(git ls-files '*.cpp' '*.h' 2>/dev/null || find dsl lowering backends apps tests tutorials -name '*.cpp' -o -name '*.h')
bad=()
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  "$formatter" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "Not formatted with $("$formatter" --version):"
  printf '  %s\n' "${bad[@]}"
  exit 1
fi
echo "format: ${#files[@]} files follow .clang-format"
