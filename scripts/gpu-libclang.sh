#!/usr/bin/env bash
# Puts into .whl/ (ignored by git) what scripts/gpu-check.sh needs to load libclang on a GPU
# server that has none: PyPI's self-contained libclang wheel and clang's builtin headers
# (stddef.h...) from this machine's libclang-14-dev. Carry .whl with the GPU run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$root/.whl"
grep -qx '/.whl/' "$root/.git/info/exclude" 2>/dev/null || { mkdir -p "$root/.git/info"; echo '/.whl/' >>"$root/.git/info/exclude"; }
ls "$root"/.whl/libclang-*.whl >/dev/null 2>&1 ||
  python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux2010_x86_64 --platform manylinux2014_x86_64 -d "$root/.whl" libclang==18.1.1
inc=$(ls -d /usr/lib/llvm-*/lib/clang/*/include | tail -1)
tar cJf "$root/.whl/clang-include.tar.xz" -C "$(dirname "$inc")" include
du -sh "$root/.whl"
