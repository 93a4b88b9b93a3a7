#!/usr/bin/env bash
# The static launcher for aarch64 (docs/install.md "aarch64"): cross-built with Debian's g++-aarch64-linux-gnu
# through cmake/toolchains/aarch64-linux-gnu.cmake against Debian's arm64 packages unpacked by
# scripts/aarch64-sysroot.sh (scripts/install-deps.sh puts them in /opt/hpclaunch/aarch64-sysroot), then run
# under qemu-user (qemu-aarch64-static, called directly: no binfmt_misc needed) in the same otherwise empty root
# as t0720's x86_64 binary: sites, render, env, exec and a one-node agent. The workers `exec` and the agent
# start are t0720's static x86_64 worker: the emulated execve hands them to the kernel, which runs them
# natively. Builds in BUILD-aarch64 (kept, ccache: seconds when nothing changed; minutes otherwise).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-static.sh"
need_cmd cmake file ldd gcc chroot aarch64-linux-gnu-g++ qemu-aarch64-static
sysroot=${HPCLAUNCH_AARCH64_SYSROOT:-/opt/hpclaunch/aarch64-sysroot}
[ -d "$sysroot/usr/lib/aarch64-linux-gnu" ] ||
  fail "no arm64 sysroot in $sysroot; run scripts/install-deps.sh (or scripts/aarch64-sysroot.sh $sysroot)"
build=$HPCLAUNCH_BUILD_DIR-aarch64
static_build "$build" -DCMAKE_TOOLCHAIN_FILE="$HPCLAUNCH_SOURCE_DIR/cmake/toolchains/aarch64-linux-gnu.cmake" \
  -DHPCLAUNCH_AARCH64_SYSROOT="$sysroot"
bin=$build/launcher/hpclaunch
static_check_linkage "$bin" "ARM aarch64"
note "$(stat -c %s "$bin") bytes; $(file -L "$bin" | grep -o 'for GNU/Linux [0-9.]*')"
root=$test_tmp/root
static_make_root "$root" "$bin"
cp "$(command -v qemu-aarch64-static)" "$root/bin/qemu-aarch64-static"
static_commands "$root" /bin/qemu-aarch64-static
echo "ok"
