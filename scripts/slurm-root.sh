#!/usr/bin/env bash
# A Debian 13 (trixie) root with Debian's Slurm 24.11 (slurmctld, slurmd, slurm-client, munge), for the test
# cluster's second Slurm version (scripts/test-cluster.sh, TEST_CLUSTER_SLURM=24.11; docs/slurm-versions.md). The
# daemons and client commands run chrooted into it; the host's own Slurm (22.05) stays as it is. Made once per
# machine: DIR/.packages holds the versions installed, and a run that finds the same candidate versions in trixie
# does nothing. No systemd: policy-rc.d keeps the packages from starting their daemons.
#
#   scripts/slurm-root.sh [DIR]     default: ${HPCLAUNCH_ROOTS:-/opt/hpclaunch}/roots/slurm-24.11
#
# It also builds DIR/usr/local/lib/hpclaunch/hostroot.so, a SPANK plugin the cluster's plugstack.conf loads: each
# task (the batch script too) leaves the root for the machine's own file system just before it starts, so a job
# runs the machine's binaries (hpclaunch, /usr/bin/python3, mpirun) with the machine's libraries, while slurmd
# and slurmstepd stay on the root's. Needs root, debootstrap, gcc and deb.debian.org; takes a few minutes cold.
set -euo pipefail
prog=slurm-root.sh
die() { echo "$prog: error: $*" >&2; exit 1; }
dir=${1:-${HPCLAUNCH_ROOTS:-/opt/hpclaunch}/roots/slurm-24.11}
mirror=${HPCLAUNCH_DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=trixie
# libslurm-dev: spank.h for hostroot.so, built against this Slurm's version.
packages=(slurmctld slurmd slurm-client munge libslurm-dev)
[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot)"
command -v debootstrap >/dev/null || die "'debootstrap' not found; apt-get install debootstrap"
command -v gcc >/dev/null || die "'gcc' not found; apt-get install gcc"

# in_root ROOT CMD...: CMD chrooted into ROOT with /proc and /dev, in a mount namespace of its own, so that no
# mount outlives it (a failed install leaves nothing mounted under ROOT, and rm -rf ROOT cannot reach /dev).
in_root() {
  local root=$1; shift
  # shellcheck disable=SC2016  # expanded by that sh
  unshare -m --propagation private -- sh -c 'r=$1; shift
    mount -t proc proc "$r/proc" && mount --bind /dev "$r/dev" && exec chroot "$r" "$@"' sh "$root" \
    env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 "$@"
}
# Processes whose root is under ROOT: a running 24.11 cluster. The root is not replaced under them.
root_users() {
  local p r
  for p in /proc/[0-9]*; do
    r=$(readlink "$p/root" 2>/dev/null) || continue
    case $r in "$1" | "$1"/*) echo "${p#/proc/}" ;; esac
  done
}
# installed ROOT: name=version of the packages, as dpkg in ROOT has them.
# shellcheck disable=SC2016  # dpkg-query's format
installed() { chroot "$1" dpkg-query -W -f '${Package}=${Version}\n' "${packages[@]}" 2>/dev/null; }

hostroot_c=$(cat <<'EOF'
/* hostroot.so, written by scripts/slurm-root.sh: a SPANK plugin for the test cluster's Slurm root. The daemons
 * run chrooted into a Debian 13 root; each task chroots to the directory given as the plugin's argument (the
 * machine's "/", bind-mounted there) just before it becomes the user, so the job sees the machine's files. */
#include <limits.h>
#include <string.h>
#include <unistd.h>
#include <slurm/spank.h>

SPANK_PLUGIN(hostroot, 1);

/* The test cluster's in-root keeps the machine's LD_LIBRARY_PATH and LD_PRELOAD away from the root's Slurm
 * commands (they would load the machine's libraries) under these names; the task, back on the machine, gets
 * them again, as a job of the machine's own Slurm would. */
static void restore(spank_t sp, const char *name, const char *saved)
{
	char value[65536];
	if (spank_getenv(sp, saved, value, sizeof(value)) != ESPANK_SUCCESS)
		return;
	spank_setenv(sp, name, value, 1);
	spank_unsetenv(sp, saved);
}

int slurm_spank_task_init_privileged(spank_t sp, int ac, char **av)
{
	char cwd[PATH_MAX];
	if (!spank_remote(sp) || ac < 1)
		return 0;
	restore(sp, "LD_LIBRARY_PATH", "HPCLAUNCH_HOST_LD_LIBRARY_PATH");
	restore(sp, "LD_PRELOAD", "HPCLAUNCH_HOST_LD_PRELOAD");
	if (!getcwd(cwd, sizeof(cwd)))
		strcpy(cwd, "/");
	if (chroot(av[0]) != 0) {
		slurm_error("hostroot: chroot(%s): %m", av[0]);
		return -1;
	}
	/* The same path on the machine's side: the cluster's folders are bind-mounted into the root. */
	if (chdir(cwd) != 0 && chdir("/") != 0) {
		slurm_error("hostroot: chdir(%s): %m", cwd);
		return -1;
	}
	return 0;
}
EOF
)
hostroot_built=0
# build_hostroot ROOT: compiles hostroot.so against ROOT's spank.h (its plugin_version must be ROOT's Slurm's).
build_hostroot() {
  local root=$1 out=$1/usr/local/lib/hpclaunch/hostroot.so inc
  if [ -f "$out" ] && [ "$(cat "$out.c" 2>/dev/null)" = "$hostroot_c" ]; then return 0; fi
  inc=$(mktemp -d)
  ln -s "$root/usr/include/slurm" "$inc/slurm"
  mkdir -p "$(dirname "$out")"
  printf '%s\n' "$hostroot_c" >"$out.c"
  # A new file renamed over the old: a running slurmstepd may have the old one mapped.
  gcc -shared -fPIC -O2 -Wall -I "$inc" -o "$out.new" "$out.c" || { rm -rf "$inc" "$out.new"; die "cannot build $out"; }
  mv "$out.new" "$out"
  rm -rf "$inc"
  hostroot_built=1
}

if [ -f "$dir/.packages" ]; then
  # Candidates in trixie now; without the network the root stays as it is.
  if in_root "$dir" apt-get update -qq >/dev/null 2>&1; then
    want=$(in_root "$dir" apt-cache policy "${packages[@]}" | awk '/^[^ ]/ {p=$1; sub(":$", "", p)}
      /Candidate:/ {print p "=" $2}')
  else
    want=$(cat "$dir/.packages")
    echo "$prog: cannot reach $mirror; keeping $dir as it is" >&2
  fi
  if [ "$(sort <<<"$want")" = "$(sort "$dir/.packages")" ]; then
    build_hostroot "$dir"
    what="nothing to do"
    [ $hostroot_built = 0 ] || what="hostroot.so built anew from this script's source"
    echo "$prog: $dir already holds $(grep '^slurmd=' "$dir/.packages"): $what"
    exit 0
  fi
fi
if [ -d "$dir" ]; then
  users=$(root_users "$dir")
  [ -z "$users" ] || die "$dir is in use by pids $(tr '\n' ' ' <<<"$users")(a test cluster of Slurm 24.11?); stop it first"
fi

start=$(date +%s)
new=$dir.new
rm -rf "$new"
mkdir -p "$new"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
unshare -m --propagation private -- debootstrap --variant=minbase "$suite" "$new" "$mirror" >"$log" 2>&1 \
  || { tail -20 "$log" >&2; die "debootstrap $suite failed (log above); $new is left for a look"; }
# No init system in the root: the packages' postinst must not start daemons.
printf '#!/bin/sh\nexit 101\n' >"$new/usr/sbin/policy-rc.d"
chmod 755 "$new/usr/sbin/policy-rc.d"
in_root "$new" apt-get install -y -qq --no-install-recommends "${packages[@]}" >"$log" 2>&1 \
  || { tail -20 "$log" >&2; die "apt-get install in $new failed (log above)"; }
in_root "$new" apt-get clean
# The test cluster's wrappers ask for this file to know they already run in the root.
echo "$suite $(date -u +%F)" >"$new/etc/hpclaunch-slurm-root"
build_hostroot "$new"
installed "$new" >"$new/.packages"
[ "$(wc -l <"$new/.packages")" = ${#packages[@]} ] || die "not every package is installed in $new: $(cat "$new/.packages")"
rm -rf "$dir"
mv "$new" "$dir"
echo "$prog: Debian $suite root with $(grep '^slurmd=' "$dir/.packages") made in $dir in $(($(date +%s) - start)) s ($(du -sm "$dir" | cut -f1) MB)"
