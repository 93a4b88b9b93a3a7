# Sourced by the scripts that run in the Debian 13 root (t0425): run_in_root ROOT
# BUILD SCRIPT runs SCRIPT with the root's bash in ROOT, in a mount namespace of its own (nothing stays mounted
# afterwards, whatever happens), with the source bound read-only at /src and BUILD at /build (its working
# folder), and prints its output; a failing SCRIPT fails the test. SCRIPT may call `step NAME CMD...`: CMD's
# output goes to NAME.log in the build folder, and a failing step prints the log's end and one FAIL line.
need_cmd chroot unshare mount
[ "$(id -u)" -eq 0 ] || fail "needs root (a mount namespace, chroot), as CI runs it"
run_in_root() {
  local root=$1 build=$2 script=$3 out
  # shellcheck disable=SC2016  # expanded in the root
  local steps='
set -euo pipefail
cd /build
step() {
  local name=$1
  shift
  "$@" >"$name.log" 2>&1 || { tail -40 "$name.log"; echo "FAIL: $name in the Debian 13 root"; exit 1; }
}
'
  mkdir -p "$build"
  # shellcheck disable=SC2016  # expanded by the inner bash
  out=$(unshare --mount --propagation private bash -c '
    root=$1 src=$2 build=$3 script=$4
    mount --bind "$src" "$root/src" && mount -o remount,bind,ro "$root/src"
    mount --bind "$build" "$root/build"
    mount -t proc proc "$root/proc"
    chroot "$root" env -i PATH=/usr/bin:/bin HOME=/root TMPDIR=/tmp bash -c "$script"
  ' _ "$root" "$HPCLAUNCH_SOURCE_DIR" "$build" "$steps$script" 2>&1) || { echo "$out" >&2; fail "in the Debian 13 root $root (above)"; }
  echo "$out"
}

# The Debian 13 root with LibTorch 2.6 and its torchrun, for t0425 alone now (the trainer's builds against a newer
# LibTorch are the torch 2.15 wheel's: lib-wheel.sh); no script makes it any more: t0425 moves to the peers' venv.
debian13_root=${HPCLAUNCH_DEBIAN13_ROOT:-/opt/hpclaunch/debian13-cuda-root}
need_debian13_root() {
  [ -f "$debian13_root/.hpclaunch-packages" ] ||
    fail "no Debian 13 root in $debian13_root"
}
