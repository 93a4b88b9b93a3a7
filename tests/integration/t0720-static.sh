#!/usr/bin/env bash
# The static launcher (docs/install.md "The static binary"): -DHPCLAUNCH_STATIC=ON builds an hpclaunch that `file` calls
# statically linked and ldd cannot load anything for, and that runs `sites`, `render` (Slurm, PBS), `env` (MASTER_ADDR
# through /etc/hosts), `exec` and a one-node agent with two workers inside a root directory holding only itself, a
# static worker, /etc/hosts, /dev/null and /tmp (lib-static.sh): no shared library, no NSS module, no /proc. On main
# before this test the static link failed (libhwloc.so). Builds in BUILD-static (kept, ccache: seconds when nothing
# changed; a fresh build of the launcher otherwise, minutes on 2 cores: docs/install.md "Tests and their cost").
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-static.sh"
need_cmd cmake file ldd gcc chroot
build=$HPCLAUNCH_BUILD_DIR-static
static_build "$build"
bin=$build/launcher/hpclaunch
static_check_linkage "$bin" "x86-64"
note "$(stat -c %s "$bin") bytes; $(file -L "$bin" | grep -o 'for GNU/Linux [0-9.]*')"
# libhwloc.a with the libudev stand-ins (cmake/static/no_udev.cc) reads this machine's topology (it needs /sys,
# so outside the root): --numa-binding binds the worker to the CPUs of a NUMA node.
out=$("$bin" agent --standalone --nproc-per-node 1 --numa-binding node --no-python -- \
  sh -c 'grep Cpus_allowed_list /proc/self/status' 2>&1) || fail "agent --numa-binding (static): $out"
assert_contains "$out" "Cpus_allowed_list:" "agent --numa-binding (static)"
root=$test_tmp/root
static_make_root "$root" "$bin"
static_commands "$root"
echo "ok"
