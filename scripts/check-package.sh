#!/usr/bin/env bash
# Builds the Debian package from a build folder, installs it, runs the installed programs,
# validates the installed desktop entry and AppStream metainfo, and removes the package again
# (docs/packaging.md). Needs root or sudo; CI runs it on a fresh Debian 12 after `make test`.
#   scripts/check-package.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: scripts/check-package.sh BUILD_DIR}
build=$(cd "$build" && pwd)
sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
id=io.github.kernelfoundry.KernelFoundry

step() { printf '\n== %s\n' "$*"; }
fail() { printf 'check-package: %s\n' "$*" >&2; exit 1; }

if dpkg -s kernel-foundry >/dev/null 2>&1; then
  fail "kernel-foundry is already installed on this machine; remove it first (this check installs and removes it)"
fi

step "cpack in $build"
rm -f "$build"/kernel-foundry_*.deb
(cd "$build" && cpack -G DEB >/dev/null) || fail "cpack failed (see $build/_CPack_Packages)"
deb=$(ls "$build"/kernel-foundry_*.deb)
dpkg-deb --field "$deb" Package Version Architecture Depends Recommends Suggests

step "contents"
contents=$(dpkg-deb --contents "$deb" | awk '{print $NF}')
for f in ./usr/bin/kfoundry ./usr/bin/kfoundry-worker ./usr/bin/kernel-foundry \
         ./usr/share/man/man1/kfoundry.1 ./usr/share/man/man1/kfoundry-worker.1 ./usr/share/man/man1/kernel-foundry.1 \
         ./usr/share/applications/$id.desktop ./usr/share/metainfo/$id.metainfo.xml \
         ./usr/share/mime/packages/$id.xml ./usr/share/icons/hicolor/scalable/apps/$id.svg \
         ./usr/share/kernel-foundry/tasks/; do
  grep -qxF "$f" <<<"$contents" || fail "the package lacks $f"
done
# The package names in Depends, one a line (alternatives included, versions dropped).
depends=$(dpkg-deb --field "$deb" Depends | tr ',|' '\n\n' | awk '{print $1}')
for d in bubblewrap g++ binutils libqt6svg6 libqt6widgets6 libqt6charts6; do
  grep -qxF "$d" <<<"$depends" || fail "the package does not depend on $d"
done
echo "all expected files and dependencies are there"

# Whatever happens from here on, the package is removed again.
cleanup() { $sudo dpkg --purge kernel-foundry >/dev/null 2>&1 || true; rm -rf "$scratch"; }
scratch=$(mktemp -d)
trap cleanup EXIT

step "install"
if ! $sudo dpkg -i "$deb"; then
  echo "installing what the package depends on"
  $sudo apt-get install -f -y -qq --no-install-recommends
fi
dpkg -s kernel-foundry | grep -q '^Status: install ok installed' || fail "the package is not installed"

step "run the installed programs"
# A clean home and no overrides: what a user who just installed the package gets.
mkdir -m 700 "$scratch/runtime"
run() {
  env -i HOME="$scratch" XDG_RUNTIME_DIR="$scratch/runtime" PATH=/usr/bin:/bin LANG=C.UTF-8 \
    QT_QPA_PLATFORM=offscreen "$@"
}
run /usr/bin/kfoundry --version
run /usr/bin/kfoundry tasks list | tee "$scratch/tasks.txt"
grep -q softmax "$scratch/tasks.txt" || fail "kfoundry tasks list did not find the bundled tasks"
run /usr/bin/kfoundry-worker --help
version=$(run /usr/bin/kernel-foundry --version 2>/dev/null)
echo "$version"
[[ "$version" == kernel-foundry\ * ]] || fail "kernel-foundry --version printed '$version'"
if run /usr/bin/kernel-foundry "$scratch/not-a-project" 2>"$scratch/err.txt"; then
  fail "kernel-foundry accepted a path that is not a project"
fi
grep -q "No such file or folder" "$scratch/err.txt" || fail "kernel-foundry's message for a bad path: $(cat "$scratch/err.txt")"
echo "a path that is not a project is refused: $(cat "$scratch/err.txt")"

step "validate the desktop entry and the metainfo"
desktop-file-validate /usr/share/applications/$id.desktop
appstreamcli validate --no-net /usr/share/metainfo/$id.metainfo.xml
if [ -f /usr/share/mime/globs2 ]; then
  grep -q 'application/x-kernel-foundry-project:\*\.kfproj' /usr/share/mime/globs2 ||
    fail "the MIME database does not know *.kfproj"
  echo "the MIME database maps *.kfproj to application/x-kernel-foundry-project"
fi

step "remove"
$sudo dpkg --purge kernel-foundry
[ ! -e /usr/bin/kfoundry ] || fail "/usr/bin/kfoundry is still there after removal"
trap - EXIT
rm -rf "$scratch"
echo "check-package: $(basename "$deb") builds, installs, runs and uninstalls"
