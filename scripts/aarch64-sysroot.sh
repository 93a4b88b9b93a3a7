#!/usr/bin/env bash
# scripts/aarch64-sysroot.sh DIR: unpacks Debian's arm64 -dev packages that the static launcher links into DIR,
# a sysroot for cmake/toolchains/aarch64-linux-gnu.cmake (docs/install.md, "aarch64"). Nothing is installed:
# libyaml-cpp-dev is not Multi-Arch: same in Debian 12, so `apt-get install libyaml-cpp-dev:arm64` would remove
# the amd64 one. Needs `dpkg --add-architecture arm64 && apt-get update` once (scripts/install-deps.sh does it);
# downloads from Debian's archive with `apt-get download`. Does nothing when DIR already holds these versions.
set -euo pipefail
dir=${1:?usage: scripts/aarch64-sysroot.sh DIR}
# What the launcher links (launcher/CMakeLists.txt) and has no arch-independent package for; the header-only
# ones (CLI11, nlohmann-json, kainjow mustache) come from the build machine's /usr/include. libfmt9 and
# libyaml-cpp0.7 only because their CMake packages check that the shared library they name exists.
packages=(libyaml-cpp-dev libyaml-cpp0.7 libfmt-dev libfmt9 libboost1.74-dev libboost-filesystem1.74-dev libssl-dev
  libhwloc-dev)
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "aarch64-sysroot.sh: dpkg has no arm64 architecture; run: dpkg --add-architecture arm64 && apt-get update" >&2
  exit 1
fi
want=$(for p in "${packages[@]}"; do
  v=$(apt-cache policy "$p:arm64" | awk '/Candidate:/ {print $2}')
  if [ -z "$v" ] || [ "$v" = "(none)" ]; then
    echo "aarch64-sysroot.sh: no arm64 candidate for $p (apt-get update after dpkg --add-architecture arm64?)" >&2
    exit 1
  fi
  echo "$p=$v"
done)
if [ -f "$dir/.packages" ] && [ "$(cat "$dir/.packages")" = "$want" ]; then
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# apt's _apt user downloads into a folder it can write (else it warns and downloads as root).
chmod 0777 "$tmp"
(cd "$tmp" && apt-get download -qq $(sed 's/=/:arm64=/' <<<"$want"))
rm -rf "$dir"
mkdir -p "$dir"
for deb in "$tmp"/*.deb; do
  dpkg-deb -x "$deb" "$dir"
done
echo "$want" >"$dir/.packages"
echo "aarch64-sysroot.sh: $(wc -l <<<"$want") arm64 packages unpacked into $dir"
