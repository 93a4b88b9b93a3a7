#!/usr/bin/env bash
# The launcher builds without LibTorch (a cluster login node needs the launcher first): a fresh configure that
# cannot see Torch (CMAKE_DISABLE_FIND_PACKAGE_Torch) says the trainer is skipped and why, and the `hpclaunch`
# target builds and works (--version, render, plot); -DHPCLAUNCH_BUILD_TRAINER=OFF (or its short form
# HPCLAUNCH_TRAINER=OFF) says so instead; README's install line, taken from README, builds and installs the
# launcher alone with its man pages into a temporary HOME, and a tree where nothing was built installs what it
# has. The builds use ccache when it is installed: scripts/test.sh builds with ccache too, and this build
# directory sits beside the full build's (BUILD-launcher-only) with the same flags, so every object is a cache
# hit and the build takes seconds; without ccache it compiles the launcher again (minutes on 2 cores). The
# install tree itself is t0700's.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
need_cmd cmake
src=$HPCLAUNCH_SOURCE_DIR
build=$HPCLAUNCH_BUILD_DIR-launcher-only  # kept between runs: a rebuild is incremental
use_ccache "$src"  # this build folder is at the full build's depth: its objects hit
mapfile -t type < <(main_build_type)  # as the main build: its objects hit
cmake -S "$src" -B "$build" "${type[@]}" -DHPCLAUNCH_BUILD_TESTS=OFF -DHPCLAUNCH_BUILD_TRAINER=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_Torch=ON "${ccache_launcher[@]}" >"$test_tmp/configure.log" 2>&1 ||
  fail "configure without Torch failed: $(tail -20 "$test_tmp/configure.log")"
assert_contains "$(cat "$test_tmp/configure.log")" "hpclaunch-train: skipped, LibTorch not found"
assert_contains "$(cat "$test_tmp/configure.log")" "torch.utils.cmake_prefix_path"
cmake --build "$build" -j 2 --target hpclaunch >"$test_tmp/build.log" 2>&1 ||
  fail "the launcher does not build without Torch: $(tail -30 "$test_tmp/build.log")"
# What the binary loads, whatever the generator wrote (make's link.txt, Ninja's build.ninja).
libs=$(ldd "$build/launcher/hpclaunch") || fail "ldd $build/launcher/hpclaunch failed: $libs"
assert_contains "$libs" "libyaml-cpp" "ldd hpclaunch (the libraries it loads)"
# The names ldd resolved, not its lines: a load address such as 0x00007fcdc9ec1000 holds "c10" by chance (CI's
# stop 46 failed on exactly that).
names=$(awk '{print $1}' <<<"$libs")
! grep -Eqi '(torch|c10|gloo)' <<<"$names" || fail "hpclaunch loads something of Torch: $(grep -Ei '(torch|c10|gloo)' <<<"$names")"
hl=$build/launcher/hpclaunch
export XDG_CONFIG_HOME=$test_tmp/config XDG_STATE_HOME=$test_tmp/state
assert_contains "$("$hl" --version)" "hpclaunch "
assert_contains "$("$hl" render --site perlmutter --nodes 2 --account m1234_g -- python train.py)" "#SBATCH"
printf '{"step": 1, "loss": 1.0}\n{"step": 2, "loss": 0.5}\n' >"$test_tmp/user.jsonl"
"$hl" plot "$test_tmp/user.jsonl" -o "$test_tmp/user.svg" >/dev/null 2>&1 || fail "plot from the launcher-only build"

# Said, not guessed: the switch's short form configures the launcher alone.
cmake -S "$src" -B "$build" -DHPCLAUNCH_TRAINER=OFF -UCMAKE_DISABLE_FIND_PACKAGE_Torch >"$test_tmp/configure2.log" 2>&1 ||
  fail "configure with HPCLAUNCH_TRAINER=OFF failed: $(tail -20 "$test_tmp/configure2.log")"
assert_contains "$(cat "$test_tmp/configure2.log")" "hpclaunch-train: skipped, HPCLAUNCH_BUILD_TRAINER=OFF"
assert_contains "$(grep HPCLAUNCH_BUILD_TRAINER "$build/CMakeCache.txt")" "HPCLAUNCH_BUILD_TRAINER:BOOL=OFF"

# README's "On a cluster" install line, exactly as README shows it (taken from README by tests/tools/
# doc_commands.py with the other lines marked `run by t0710`: docs/install.md's `cmake --install build --prefix
# ~/.local`, run after it), in a copy of the tree as a user's clone, with HOME a temporary directory: the launcher
# alone is built (`--target hpclaunch`, not `all`) and `cmake --install` installs it with its man pages and
# completion, and no trainer (the install once stopped at the man pages, which only `all` made).
# CMAKE_CXX_COMPILER_LAUNCHER (CMake's environment default) and CCACHE_BASEDIR at the copy make its objects the
# full build's: seconds, not minutes.
mapfile -t lines < <(python3 "$src/tests/tools/doc_commands.py" "$src" --run-by t0710)
[ "${#lines[@]}" -ge 1 ] || fail "no command line in README/docs is marked 'run by t0710'"
assert_contains "${lines[0]}" "--target hpclaunch" "README's install line (the first marked 'run by t0710')"
clone=$test_tmp/clone
mkdir -p "$clone" "$test_tmp/home"
(cd "$src" && { git ls-files -z -co --exclude-standard 2>/dev/null || find . -path ./build\* -prune -o -type f -print0; } |
  tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -xf - -C "$clone"
assert_file "$clone/CMakeLists.txt"
env_cc=()
if command -v ccache >/dev/null; then
  # The cache found from the real HOME (ccache looks under $HOME, which the line runs with a temporary one).
  env_cc=(CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_BASEDIR="$clone" CCACHE_DIR="$(ccache -k cache_dir)")
fi
for line in "${lines[@]}"; do
  (cd "$clone" && env HOME="$test_tmp/home" "${env_cc[@]}" bash -c "$line") >"$test_tmp/readme.log" 2>&1 ||
    fail "a documented install line failed: $line
$(tail -20 "$test_tmp/readme.log")"
done
prefix=$test_tmp/home/.local
assert_contains "$("$prefix/bin/hpclaunch" --version)" "hpclaunch "
assert_file "$prefix/share/man/man1/hpclaunch-submit.1"
assert_file "$prefix/share/bash-completion/completions/hpclaunch"
[ -L "$prefix/libexec/hpclaunch/torchrun/torchrun" ] || fail "no libexec/hpclaunch/torchrun/torchrun link"
[ ! -e "$prefix/bin/hpclaunch-train" ] || fail "a launcher-only install has hpclaunch-train"

# Whatever was built is what is installed: a configured tree where nothing was built installs the documents
# without an error, and no torchrun link naming a binary that is not there.
cmake -S "$clone" -B "$clone/build-nothing" -DHPCLAUNCH_BUILD_TRAINER=OFF -DHPCLAUNCH_BUILD_TESTS=OFF \
  >"$test_tmp/configure3.log" 2>&1 || fail "configure failed: $(tail -20 "$test_tmp/configure3.log")"
cmake --install "$clone/build-nothing" --prefix "$test_tmp/prefix-nothing" >"$test_tmp/install3.log" 2>&1 ||
  fail "installing an unbuilt tree failed: $(tail -20 "$test_tmp/install3.log")"
assert_file "$test_tmp/prefix-nothing/share/doc/hpclaunch/README.md"
[ ! -e "$test_tmp/prefix-nothing/bin/hpclaunch" ] || fail "an unbuilt tree installed bin/hpclaunch"
[ ! -L "$test_tmp/prefix-nothing/libexec/hpclaunch/torchrun/torchrun" ] || fail "a torchrun link without bin/hpclaunch"
echo "ok"
