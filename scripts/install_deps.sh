#!/usr/bin/env bash
# Installs the Debian packages AICF builds against, and any packages given as arguments (the
# benchmarks' peers). Idempotent: it asks apt only for what is missing, and runs
# `apt-get update` at most once.
set -euo pipefail

packages=(llvm-19-dev libeigen3-dev libgtest-dev libboost-dev cmake ninja-build g++ ccache zlib1g-dev libzstd-dev clang-format-14 libdlpack-dev graphviz "$@")

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  sudo_cmd=(sudo)
fi

echo "installing: ${missing[*]}"
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
