#!/usr/bin/env bash
# The launcher builds without LibTorch (issue 10 §3; a cluster login node needs the launcher first): a fresh
# configure that cannot see Torch (CMAKE_DISABLE_FIND_PACKAGE_Torch) says the trainer is skipped and why, and the
# `hpclaunch` target builds and works (--version, render, plot); -DHPCLAUNCH_BUILD_TRAINER=OFF (or its short form
# HPCLAUNCH_TRAINER=OFF) says so instead, and the install tree has no hpclaunch-train. The build uses ccache when
# it is installed: scripts/test.sh builds with ccache too, and this build directory sits beside the full build's
# (BUILD-launcher-only) with the same flags, so every object is a cache hit and the build takes seconds; without
# ccache it compiles the launcher again (minutes on 2 cores). The install tree itself is t0700's.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
need_cmd cmake
src=$HPCLAUNCH_SOURCE_DIR
build=$HPCLAUNCH_BUILD_DIR-launcher-only  # kept between runs: a rebuild is incremental
launcher=()
if command -v ccache >/dev/null; then
  # Paths relative to each build directory, which are at the same depth: the full build's objects hit.
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$src} CCACHE_NOHASHDIR=1  # as scripts/test.sh
fi
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHPCLAUNCH_BUILD_TESTS=OFF -DHPCLAUNCH_BUILD_TRAINER=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_Torch=ON "${launcher[@]}" >"$test_tmp/configure.log" 2>&1 ||
  fail "configure without Torch failed: $(tail -20 "$test_tmp/configure.log")"
assert_contains "$(cat "$test_tmp/configure.log")" "hpclaunch-train: skipped, LibTorch not found"
assert_contains "$(cat "$test_tmp/configure.log")" "torch.utils.cmake_prefix_path"
cmake --build "$build" -j 2 --target hpclaunch >"$test_tmp/build.log" 2>&1 ||
  fail "the launcher does not build without Torch: $(tail -30 "$test_tmp/build.log")"
! grep -qi 'torch' "$build/launcher/CMakeFiles/hpclaunch.dir/link.txt" || fail "hpclaunch links something of Torch"
hl=$build/launcher/hpclaunch
export XDG_CONFIG_HOME=$test_tmp/config XDG_STATE_HOME=$test_tmp/state
assert_contains "$("$hl" --version)" "hpclaunch "
assert_contains "$("$hl" render --site perlmutter --nodes 2 --account m1234_g -- python train.py)" "#SBATCH"
printf '{"step": 1, "loss": 1.0}\n{"step": 2, "loss": 0.5}\n' >"$test_tmp/user.jsonl"
"$hl" plot "$test_tmp/user.jsonl" -o "$test_tmp/user.svg" >/dev/null 2>&1 || fail "plot from the launcher-only build"

# Said, not guessed: the switch off (and its short form) configures the launcher alone and installs no trainer.
cmake -S "$src" -B "$build" -DHPCLAUNCH_TRAINER=OFF -UCMAKE_DISABLE_FIND_PACKAGE_Torch >"$test_tmp/configure2.log" 2>&1 ||
  fail "configure with HPCLAUNCH_TRAINER=OFF failed: $(tail -20 "$test_tmp/configure2.log")"
assert_contains "$(cat "$test_tmp/configure2.log")" "hpclaunch-train: skipped, HPCLAUNCH_BUILD_TRAINER=OFF"
assert_contains "$(grep HPCLAUNCH_BUILD_TRAINER "$build/CMakeCache.txt")" "HPCLAUNCH_BUILD_TRAINER:BOOL=OFF"
cmake --build "$build" -j 2 --target hpclaunch hpclaunch_docs >"$test_tmp/build2.log" 2>&1 ||
  fail "rebuild failed: $(tail -20 "$test_tmp/build2.log")"
cmake --install "$build" --prefix "$test_tmp/prefix" >"$test_tmp/install.log" 2>&1 ||
  fail "install failed: $(tail -20 "$test_tmp/install.log")"
assert_file "$test_tmp/prefix/bin/hpclaunch"
[ ! -e "$test_tmp/prefix/bin/hpclaunch-train" ] || fail "a launcher-only install has hpclaunch-train"
echo "ok"
