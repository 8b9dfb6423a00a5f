#!/usr/bin/env bash
# Builds the engine, CLI, worker and tests with the CUDA backend and no GUI, and packs the
# binaries with the shared libraries they need that a bare GPU server may lack (Qt's core
# and test libraries, ICU) into .gpu/, for scripts/gpu-check.sh to run on such a server.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KF_GPU_BUILD_DIR:-$root/build-gpu}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKF_BUILD_GUI=OFF -DKF_WITH_CUDA=ON >/dev/null
cmake --build "$build" -j "$(nproc)"
rm -rf "$root/.gpu"
mkdir -p "$root/.gpu/bin" "$root/.gpu/tests" "$root/.gpu/lib"
cp "$build/bin/kfoundry" "$build/bin/kfoundry-worker" "$root/.gpu/bin/"
cp "$build"/tests/gpu_* "$build"/tests/unit_test_worker_host "$root/.gpu/tests/" 2>/dev/null || true
# Libraries outside glibc, libstdc++ and the CUDA toolkit (those exist on the GPU server).
for f in "$root"/.gpu/bin/* "$root"/.gpu/tests/*; do
  ldd "$f" | awk '/=> \//{print $3}'
done | sort -u | grep -Ev '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*|libstdc\+\+|libgcc_s|libcuda|libcudart|libcupti|libnvperf[^/]*|libgomp|libz|libutil)\.so' |
  while read -r lib; do cp -L "$lib" "$root/.gpu/lib/"; done
strip --strip-unneeded "$root"/.gpu/bin/* "$root"/.gpu/tests/* "$root"/.gpu/lib/* 2>/dev/null || true
du -sh "$root/.gpu"
