#!/usr/bin/env bash
# scripts/debian13-root.sh DIR: a Debian 13 (trixie) root in DIR, made by debootstrap, with the packages that build
# hpclaunch and its trainer there: LibTorch 2.6 (libtorch-dev), g++ 14, CMake 3.31 and the newer yaml-cpp, fmt,
# Boost and CLI11, and Python's torch 2.6. t0515 builds hpclaunch and the trainer in it and runs their tests there
# (issue 10 §3: "builds against the LibTorch users have"; Debian 12's is 1.13). Needs root (debootstrap, chroot)
# and Debian's archive; about 2.5 GiB and two minutes. Does nothing when DIR already holds these packages.
set -euo pipefail
dir=${1:?usage: scripts/debian13-root.sh DIR}
suite=trixie
mirror=${HPCLAUNCH_DEBIAN_MIRROR:-http://deb.debian.org/debian}
packages=(g++ cmake make pkg-config libtorch-dev libgloo-dev zlib1g-dev libboost-dev libboost-filesystem-dev
  libfmt-dev libyaml-cpp-dev libcli11-dev libkainjow-mustache-dev nlohmann-json3-dev doctest-dev libssl-dev
  libhwloc-dev libopenblas0-pthread python3-torch)
want="$suite ${packages[*]}"
if [ -f "$dir/.hpclaunch-packages" ] && [ "$(cat "$dir/.hpclaunch-packages")" = "$want" ]; then
  exit 0
fi
[ "$(id -u)" -eq 0 ] || { echo "debian13-root.sh: needs root (debootstrap, chroot); run it with sudo" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "debian13-root.sh: debootstrap not found; apt-get install debootstrap" >&2; exit 1; }
rm -rf "$dir"
mkdir -p "$(dirname "$dir")"
debootstrap --variant=minbase "$suite" "$dir" "$mirror" >"$dir.debootstrap.log" 2>&1 ||
  { tail -20 "$dir.debootstrap.log" >&2; echo "debian13-root.sh: debootstrap $suite failed (log: $dir.debootstrap.log)" >&2; exit 1; }
rm -f "$dir.debootstrap.log"
# Package scripts want /proc; a mount namespace of its own keeps the mount from outliving this script.
# shellcheck disable=SC2016  # expanded by the inner bash
unshare --mount --propagation private bash -c '
  root=$1
  shift
  mount -t proc proc "$root/proc"
  in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive "$@"; }
  in_root apt-get update -qq
  in_root apt-get install -y -qq --no-install-recommends "$@"
' _ "$dir" "${packages[@]}" >"$dir.apt.log" 2>&1 ||
  { tail -20 "$dir.apt.log" >&2; echo "debian13-root.sh: apt-get in the $suite root failed (log: $dir.apt.log)" >&2; exit 1; }
rm -f "$dir.apt.log"
# The mount points t0515 binds the source and its build folder to.
mkdir -p "$dir/src" "$dir/build"
echo "$want" >"$dir/.hpclaunch-packages"
# shellcheck disable=SC2016  # a dpkg-query format
echo "debian13-root.sh: Debian 13 root with LibTorch $(chroot "$dir" dpkg-query -W -f='${Version}' libtorch-dev) in $dir"
