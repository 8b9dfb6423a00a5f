#!/usr/bin/env bash
# Builds the engine, CLI, worker and tests with the CUDA backend and no GUI, and packs the
# binaries with the shared libraries they need that a bare GPU server may lack (Qt's core
# and test libraries, ICU) into .gpu/, for scripts/gpu-check.sh to run on such a server.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KF_GPU_BUILD_DIR:-$root/build-gpu}
# KF_GPU_BUILD_DIR=build KF_GPU_KEEP_CONFIG=1: pack from an existing build (with the CUDA
# backend) as it is configured, e.g. the everyday build, instead of a Release build of its own.
if [ -z "${KF_GPU_KEEP_CONFIG:-}" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKF_BUILD_GUI=OFF -DKF_WITH_CUDA=ON >/dev/null
fi
# Only what the GPU check runs: the CLI, the worker and the GPU-labelled tests.
targets="kfoundry kfoundry-worker $(cd "$root/tests/gpu" && ls test_*.cpp | sed 's/^/gpu_/; s/\.cpp$//' | paste -sd' ')"
cmake --build "$build" -j "$(nproc)" --target $targets
rm -rf "$root/.gpu"
mkdir -p "$root/.gpu/bin" "$root/.gpu/tests" "$root/.gpu/lib"
cp "$build/bin/kfoundry" "$build/bin/kfoundry-worker" "$root/.gpu/bin/"
cp "$build"/tests/gpu_* "$root/.gpu/tests/" 2>/dev/null || true
# PyTorch's load_inline (KernelBench candidates) needs ninja; a bare server may not have it.
command -v ninja >/dev/null && cp "$(command -v ninja)" "$root/.gpu/bin/"
# The runner's and the compiler's file-system view (docs/sandbox.md); a bare server may lack it.
command -v bwrap >/dev/null && cp "$(command -v bwrap)" "$root/.gpu/bin/"
# Qt's libraries and what they need, outside glibc and libstdc++ (the GPU server has the
# rest: the CUDA toolkit, libcurl and libsqlite3 with their dependencies).
for f in "$root"/.gpu/bin/* "$root"/.gpu/tests/*; do
  ldd "$f" | awk '/=> \//{print $3}' | { grep '/libQt6' || true; }
done | sort -u >"$build/qt-libs.txt"
# libseccomp (the worker's runner filter) may be missing too.
ldd "$root/.gpu/bin/kfoundry-worker" | awk '/libseccomp/{print $3}' >>"$build/qt-libs.txt"
{ cat "$build/qt-libs.txt"; xargs -a "$build/qt-libs.txt" -n1 ldd | awk '/=> \//{print $3}'; } | sort -u |
  grep -Ev '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*|libstdc\+\+|libgcc_s|libz)\.so' |
  while read -r lib; do cp -L "$lib" "$root/.gpu/lib/"; done
# An earlier build's kfoundry and kfoundry-worker, for the GPU check's part 'honest', where
# .gpu-old/bin holds them (ignored by git; built from the commit to compare with).
if [ -x "$root/.gpu-old/bin/kfoundry" ] && [ -x "$root/.gpu-old/bin/kfoundry-worker" ]; then
  mkdir -p "$root/.gpu/old/bin"
  cp "$root/.gpu-old/bin/kfoundry" "$root/.gpu-old/bin/kfoundry-worker" "$root/.gpu/old/bin/"
  [ -f "$root/.gpu-old/bin/COMMIT" ] && cp "$root/.gpu-old/bin/COMMIT" "$root/.gpu/old/bin/"
fi
strip --strip-unneeded "$root"/.gpu/bin/* "$root"/.gpu/tests/* "$root"/.gpu/lib/* "$root"/.gpu/old/bin/kfoundry* 2>/dev/null || true
# The libraries travel compressed (ICU's data alone is 31 MB): gpu-check.sh unpacks them.
tar cJf "$root/.gpu/lib.tar.xz" -C "$root/.gpu" lib && rm -rf "$root/.gpu/lib"
du -sh "$root/.gpu"
