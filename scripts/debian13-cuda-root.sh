#!/usr/bin/env bash
# scripts/debian13-cuda-root.sh DIR: a Debian 13 (trixie) root in DIR, made by debootstrap with main, contrib and
# non-free, with the CUDA build of LibTorch 2.6 (libtorch-cuda-dev, python3-torch-cuda), the CUDA 12.4 toolkit
# (nvidia-cuda-toolkit, nvidia-cuda-dev), NCCL 2.22 (libnccl-dev) and the NVIDIA driver library (libcuda1, which
# installs without a GPU), beside what builds hpclaunch's trainer there (as scripts/debian13-root.sh, the CPU
# root, whose LibTorch conflicts with this one). t0513 builds the trainer and the preflight probe in it with
# torch_cuda found and runs the trainer's tests there (issue 25). Needs root (debootstrap, chroot) and Debian's
# archive. Does nothing when DIR already holds these packages. What it costs once (about 3 GB downloaded, 8.3 GiB
# on disk, minutes) is in docs/install.md ("Tests and their cost").
#
# cuDNN is not here, and the root says so twice:
# - libtorch-cuda-2.6 depends on nvidia-cudnn, which in Debian is an installer that downloads cuDNN from NVIDIA
#   when it is installed; nothing but Debian's archive can be reached here. A local placeholder package named
#   nvidia-cudnn (what equivs makes; built with dpkg-deb, then held) satisfies the dependency and installs no cuDNN.
# - libtorch_cuda.so (and torch's Python module) are linked against libcudnn.so.9, so neither the dynamic loader
#   nor the linker accepts them without one. A placeholder libcudnn.so.9 is compiled here with the functions those
#   libraries ask for (read from their dynamic symbols); every one of them prints that this root has no cuDNN and
#   aborts. Nothing calls cuDNN without a GPU (LibTorch uses it for GPU convolutions, batch norm and RNNs), so the
#   CPU tests never reach it; on a GPU the real cuDNN is needed (docs/trainer.md, "What the CUDA build proves").
set -euo pipefail
dir=${1:?usage: scripts/debian13-cuda-root.sh DIR}
suite=trixie
mirror=${HPCLAUNCH_DEBIAN_MIRROR:-http://deb.debian.org/debian}
packages=(g++ cmake make pkg-config libtorch-cuda-dev python3-torch-cuda nvidia-cuda-toolkit nvidia-cuda-dev
  libnccl-dev libcuda1 libgloo-cuda-dev zlib1g-dev libboost-dev libboost-filesystem-dev libfmt-dev libyaml-cpp-dev
  libcli11-dev libkainjow-mustache-dev nlohmann-json3-dev doctest-dev libssl-dev libhwloc-dev libopenblas0-pthread)
want="$suite main contrib non-free cudnn-placeholder-1 ${packages[*]}"
if [ -f "$dir/.hpclaunch-packages" ] && [ "$(cat "$dir/.hpclaunch-packages")" = "$want" ]; then
  exit 0
fi
[ "$(id -u)" -eq 0 ] || { echo "debian13-cuda-root.sh: needs root (debootstrap, chroot); run it with sudo" >&2; exit 1; }
command -v debootstrap >/dev/null ||
  { echo "debian13-cuda-root.sh: debootstrap not found; apt-get install debootstrap" >&2; exit 1; }
rm -rf "$dir"
mkdir -p "$(dirname "$dir")"
debootstrap --variant=minbase --components=main,contrib,non-free "$suite" "$dir" "$mirror" \
  >"$dir.debootstrap.log" 2>&1 ||
  { tail -20 "$dir.debootstrap.log" >&2; echo "debian13-cuda-root.sh: debootstrap $suite failed (log: $dir.debootstrap.log)" >&2; exit 1; }
rm -f "$dir.debootstrap.log"

# What runs in the root, as root, with its /proc: the cuDNN placeholders around the install (above).
# shellcheck disable=SC2016  # expanded by the root's bash
inside='
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
version=$(apt-cache policy nvidia-cudnn | sed -n "s/^ *Candidate: //p")
[ -n "$version" ] && [ "$version" != "(none)" ] || { echo "no nvidia-cudnn in the archive (contrib)"; exit 1; }
pkg=$(mktemp -d)
mkdir -p "$pkg/DEBIAN" "$pkg/usr/share/doc/nvidia-cudnn"
# The version of the archive'"'"'s nvidia-cudnn with +hpclaunch after it: versioned dependencies on it hold, and apt
# never prefers the downloader.
printf "%s\n" "Package: nvidia-cudnn" "Version: $version+hpclaunch" "Architecture: all" \
  "Maintainer: hpclaunch <hpclaunch@localhost>" "Section: contrib/libs" "Priority: optional" \
  "Description: placeholder for the cuDNN downloader (hpclaunch test root)" \
  " Installs no cuDNN: the nvidia-cudnn of Debian downloads it from NVIDIA, which cannot be reached here." \
  >"$pkg/DEBIAN/control"
echo "A placeholder: this root has no cuDNN (scripts/debian13-cuda-root.sh)." >"$pkg/usr/share/doc/nvidia-cudnn/README"
dpkg-deb --root-owner-group --build "$pkg" /tmp/nvidia-cudnn-placeholder.deb
dpkg -i /tmp/nvidia-cudnn-placeholder.deb
apt-mark hold nvidia-cudnn
rm -rf "$pkg" /tmp/nvidia-cudnn-placeholder.deb
apt-get install -y -qq --no-install-recommends "$@"
apt-get clean

# libcudnn.so.9: every function the installed libraries take from it, each one saying so and aborting.
lib=/usr/lib/x86_64-linux-gnu
work=$(mktemp -d)
syms=$(grep -l -a "libcudnn\.so\.9" "$lib"/*.so.* | while read -r f; do nm -D --undefined-only "$f"; done |
  awk "{print \$2}" | sed -n "s/@libcudnn\.so\.9\$//p" | sort -u)
[ -n "$syms" ] || { echo "no library asks for libcudnn.so.9: is LibTorch installed?"; exit 1; }
{
  echo "#include <stdio.h>"
  echo "#include <stdlib.h>"
  echo "static void placeholder(const char* name) {"
  echo "  fprintf(stderr, \"libcudnn.so.9: %s called, but this root has no cuDNN (a placeholder that only lets LibTorch load: scripts/debian13-cuda-root.sh)\\n\", name);"
  echo "  abort();"
  echo "}"
  for s in $syms; do echo "void $s(void) { placeholder(\"$s\"); }"; done
} >"$work/cudnn.c"
{ echo "libcudnn.so.9 {"; echo "  global:"; for s in $syms; do echo "    $s;"; done; echo "  local: *;"; echo "};"; } >"$work/cudnn.map"
gcc -shared -fPIC -O2 -o "$lib/libcudnn.so.9" "$work/cudnn.c" -Wl,-soname,libcudnn.so.9 \
  -Wl,--version-script="$work/cudnn.map"
rm -rf "$work"
echo "libcudnn.so.9: a placeholder with $(wc -w <<<"$syms") functions"
'
# Package scripts want /proc; a mount namespace of its own keeps the mount from outliving this script.
# shellcheck disable=SC2016  # expanded by the inner bash
unshare --mount --propagation private bash -c '
  root=$1 inside=$2
  shift 2
  mount -t proc proc "$root/proc"
  chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TMPDIR=/tmp bash -c "$inside" _ "$@"
' _ "$dir" "$inside" "${packages[@]}" >"$dir.apt.log" 2>&1 ||
  { tail -20 "$dir.apt.log" >&2; echo "debian13-cuda-root.sh: making the $suite root failed (log: $dir.apt.log)" >&2; exit 1; }
rm -f "$dir.apt.log"
# The mount points t0513 (and bench/trainer/gpu.sh --root) bind the source and a build folder to.
mkdir -p "$dir/src" "$dir/build"
echo "$want" >"$dir/.hpclaunch-packages"
# shellcheck disable=SC2016  # a dpkg-query format
echo "debian13-cuda-root.sh: Debian 13 root with CUDA LibTorch $(chroot "$dir" dpkg-query -W -f='${Version}' libtorch-cuda-dev)," \
  "CUDA $(chroot "$dir" dpkg-query -W -f='${Version}' nvidia-cuda-dev)," \
  "NCCL $(chroot "$dir" dpkg-query -W -f='${Version}' libnccl-dev), no cuDNN (placeholders) in $dir"
