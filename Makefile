# Kernel Foundry: one-command set-up on a fresh Debian 12 machine.
#   make run   install build dependencies, build, and open the app on the demo project
#   make test  install build dependencies, build, and run the test suites
BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Debian 12 packages the build needs (kept in one place: .ci/run uses this target too).
DEB_PACKAGES := build-essential cmake ninja-build pkg-config git \
  qt6-base-dev qt6-base-dev-tools qt6-charts-dev libqt6opengl6-dev qt6-tools-dev qt6-tools-dev-tools qt6-l10n-tools \
  libqscintilla2-qt6-dev libdtl-dev qtkeychain-qt6-dev libgl-dev nlohmann-json3-dev libcli11-dev \
  libsqlite3-dev libcurl4-openssl-dev libseccomp-dev libclang-14-dev bubblewrap xvfb xauth binutils python3 \
  libqt6svg6 appstream desktop-file-utils file \
  munge slurmctld slurmd slurm-client

.PHONY: deps configure build run test package gpu-check clean

deps:
	@missing=$$(for p in $(DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "Installing: $$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

configure: deps
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	@if [ -z "$$DISPLAY" ] && [ -z "$$WAYLAND_DISPLAY" ]; then \
	  echo "No display: starting the app under Xvfb (set DISPLAY to use your own)."; \
	  xvfb-run -a -s "-screen 0 1600x1000x24" $(BUILD_DIR)/bin/kernel-foundry --demo; \
	else \
	  $(BUILD_DIR)/bin/kernel-foundry --demo; \
	fi

test: build
	cd $(BUILD_DIR) && QT_QPA_PLATFORM=offscreen ctest --output-on-failure -j 2

# The Debian package, in $(BUILD_DIR) (docs/packaging.md).
package: build
	cd $(BUILD_DIR) && cpack

# On an NVIDIA machine: build without the GUI, run the GPU tests and the benchmark.
gpu-check:
	scripts/gpu-check.sh out/gpu

clean:
	rm -rf $(BUILD_DIR)
