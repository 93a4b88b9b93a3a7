# Sourced by the scripts that build and test in the Debian 13 root (t0513, t0515): run_in_root ROOT
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

# The Debian 13 root (scripts/debian13-cuda-root.sh; scripts/test.sh makes it in /opt/hpclaunch/debian13-cuda-root:
# LibTorch 2.6 built for CUDA 12.4 with NCCL 2.22, g++ 14, CMake 3.31, yaml-cpp 0.8, fmt 10, Boost 1.83, CLI11 2.4)
# and its one build folder, shared by t0513 and t0515 (a CTest RESOURCE_LOCK keeps them apart): one compile of
# hpclaunch, the trainer, the probe and both unit test programs there serves both (tests/CMakeLists.txt says why).
debian13_root=${HPCLAUNCH_DEBIAN13_ROOT:-/opt/hpclaunch/debian13-cuda-root}
debian13_build=$HPCLAUNCH_BUILD_DIR-debian13
need_debian13_root() {
  [ -f "$debian13_root/.hpclaunch-packages" ] ||
    fail "no Debian 13 root in $debian13_root; run scripts/debian13-cuda-root.sh $debian13_root (scripts/test.sh does)"
}

# root_build: configures (Release, as bench/trainer/gpu.sh builds, with warnings as errors; LibTorch's headers are
# system headers) and builds everything there, then stops in the prepare phase (`prepared`, lib.sh). No ccache in
# the root: the trainer's Torch units share a precompiled header, which ccache does not cache without sloppiness
# settings, and the kept build folder already rebuilds only what changed. The output of configure stays in
# configure.log of the build folder for the tests to read.
root_build() {
  need_debian13_root
  # shellcheck disable=SC2016  # expanded in the root
  run_in_root "$debian13_root" "$debian13_build" '
step configure cmake -S /src -B /build -DCMAKE_BUILD_TYPE=Release -DHPCLAUNCH_PLOT=OFF -DHPCLAUNCH_BUILD_TESTS=ON \
  -DCMAKE_COMPILE_WARNING_AS_ERROR=ON
# Our own CMake files must not warn there (the kineto warning comes from TorchConfig.cmake under /usr).
if grep -E "^CMake (Deprecation )?Warning.* at " configure.log | grep -v " at /usr/"; then
  echo "FAIL: configure warns in the Debian 13 root (configure.log)"
  exit 1
fi
step build make -j"$(nproc)" hpclaunch hpclaunch_unit_tests hpclaunch-train hpclaunch-probe hpclaunch_trainer_tests
echo "ok: built with warnings as errors: $(grep -c "Building CXX" build.log || true) unit(s) compiled this time"
'
  prepared
}
