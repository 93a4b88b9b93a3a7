# shellcheck shell=bash
# Sourced (after lib.sh) by the tests that build the trainer against torch 2.15 from PyPI, the peers' venv
# (scripts/peers-venv.sh): t0513 (with Debian's gloo headers: the whole trainer suite runs with it) and t0516
# (without gloo headers, as a wheel user builds it by default).
#
# wheel_build DIR TARGETS [CMAKE_ARG...]: configures DIR against that torch as a user does
# (-DCMAKE_PREFIX_PATH=$(python -c 'import torch; print(torch.utils.cmake_prefix_path)'); its CUDA 13.2 and NCCL
# come from the nvidia-* wheels beside it: trainer/CMakeLists.txt), with the main build's type and flags, ccache
# (lib-build.sh) and warnings as errors (LibTorch's headers are system headers), builds TARGETS (words), and stops
# in the prepare phase (`prepared`: scripts/test.sh builds it there, alone with both cores). configure's output
# stays in DIR/configure.log. DIR is kept: a later run compiles only what changed. Sets wheel_python (the venv's
# python).
wheel_build() {
  local dir=$1 targets prefix type=()
  read -ra targets <<<"$2"
  shift 2
  mapfile -t type < <(main_build_type)  # the main build's type and flags: the launcher's units from ccache
  wheel_python=$(peer_python)
  prefix=$("$wheel_python" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)') ||
    fail "the peers' venv has no torch ($wheel_python)"
  use_ccache "$HPCLAUNCH_SOURCE_DIR"  # sets ccache_launcher (scripts/lib-build.sh, sourced by lib.sh)
  mkdir -p "$dir"
  # shellcheck disable=SC2154  # ccache_launcher: use_ccache's
  cmake -S "$HPCLAUNCH_SOURCE_DIR" -B "$dir" "${ccache_launcher[@]}" "${type[@]}" -DCMAKE_PREFIX_PATH="$prefix" \
    -DHPCLAUNCH_PLOT=OFF -DCMAKE_COMPILE_WARNING_AS_ERROR=ON "$@" \
    >"$dir/configure.log" 2>&1 ||
    { tail -30 "$dir/configure.log"; fail "configure against torch from $prefix"; }
  # Our own CMake files must not warn (TorchConfig.cmake's warnings come from the venv).
  local ours site=${prefix%%/torch/*}
  ours=$(grep -E "^CMake (Deprecation )?Warning.* at " "$dir/configure.log" | grep -v " at $site/" || true)
  [ -z "$ours" ] || fail "configure warns against the wheel ($dir/configure.log): $ours"
  cmake --build "$dir" -j "$(nproc)" --target "${targets[@]}" \
    >"$dir/build.log" 2>&1 || { grep -B2 -A12 "error" "$dir/build.log" | head -60; fail "the build against the wheel"; }
  note "built against the wheel in $dir: $(grep -c "Building CXX" "$dir/build.log" || true) unit(s) compiled this time"
  prepared
}
