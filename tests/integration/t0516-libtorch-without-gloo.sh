#!/usr/bin/env bash
# t0516: the trainer against a LibTorch laid out as the pip wheels are, with no gloo headers (issue 35 §1). In a mount
# namespace of its own an empty folder hides Debian's /usr/include/gloo (libgloo-dev), which Debian's LibTorch finds
# through its include path /usr/include, as a wheel's torch/include has no gloo/. There: configure says so in one line
# and names HPCLAUNCH_GLOO_INCLUDE_DIR, and the trainer's DDP unit (ddp.cc, where c10d_compat.h makes the process
# groups) compiles without gloo, in unity batches as a user's build does; with HPCLAUNCH_GLOO_INCLUDE_DIR naming a copy
# of the hidden headers, configure is quiet about gloo and the same unit compiles with ProcessGroupGloo; a folder
# without gloo/ is refused at configure in one line. Without gloo the whole of hpclaunch-train and hpclaunch-probe
# builds and links, and runs as a wheel user meets it: --version ends ", without gloo)", one CPU rank trains (no process
# group), and --backend gloo or two CPU ranks are refused in one line, exit 2 (the decision itself is
# gpu_policy_test.cc's). No optimisation and no precompiled header (ddp.cc with gloo alone: file by file), in build
# folders kept beside the build (BUILD-wheel/*: configured again each run, make recompiles what changed; ccache where it
# is installed): about 3 CPU-minutes cold (three configures, the no-gloo trainer and probe, ddp.cc with gloo), under a
# minute after.
source "$(dirname "$0")/lib.sh"
[ -n "${HPCLAUNCH_TRAIN:-}" ] || skip "built without LibTorch: no trainer to configure"
need_cmd unshare mount
[ "$(id -u)" -eq 0 ] || fail "needs root (a mount namespace), as CI runs it"
[ -f /usr/include/gloo/algorithm.h ] || skip "no /usr/include/gloo (libgloo-dev) to hide"
base=$HPCLAUNCH_BUILD_DIR-wheel
mkdir -p "$base/empty" "$base/gloo-include"
cp -a /usr/include/gloo "$base/gloo-include/"  # before it is hidden; -a keeps the times, so make keeps the objects
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

# compile NAME: ddp.cc's object only.
# shellcheck disable=SC2016  # expanded by the inner bash
inner='
set -euo pipefail
base=$1 src=$2
shift 2
mount --bind "$base/empty" /usr/include/gloo
[ ! -e /usr/include/gloo/algorithm.h ] || { echo "FAIL: /usr/include/gloo is not hidden"; exit 1; }
configure() {  # DIR LOG FLAGS...: gloo is looked for at every configure (nothing of it is cached)
  local dir=$1 log=$2
  shift 2
  cmake -S "$src" -B "$base/$dir" -DCMAKE_BUILD_TYPE= -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON -DHPCLAUNCH_PLOT=OFF \
    -DHPCLAUNCH_BUILD_TESTS=OFF "$@" >"$base/$log.log" 2>&1
}
configure nogloo nogloo "$@" -DHPCLAUNCH_GLOO_INCLUDE_DIR= ||
  { tail -20 "$base/nogloo.log"; echo "FAIL: configure without gloo"; exit 1; }
# The whole trainer and probe, as a wheel user builds them (unity batches, the default): every unit compiles and
# links with no gloo.
make -C "$base/nogloo" -j"$(nproc)" hpclaunch-train hpclaunch-probe >"$base/nogloo-all.log" 2>&1 ||
  { grep -B2 -A8 "error" "$base/nogloo-all.log" | head -30; echo "FAIL: the trainer does not build without gloo"; exit 1; }
# With the headers named: ddp.cc alone (file by file, so that its object is its own).
configure gloo gloo "$@" -DCMAKE_UNITY_BUILD=OFF -DHPCLAUNCH_GLOO_INCLUDE_DIR="$base/gloo-include" ||
  { tail -20 "$base/gloo.log"; echo "FAIL: configure with HPCLAUNCH_GLOO_INCLUDE_DIR"; exit 1; }
make -C "$base/gloo/trainer" ddp.o >"$base/gloo-make.log" 2>&1 ||
  { tail -20 "$base/gloo-make.log"; echo "FAIL: ddp.cc does not compile with HPCLAUNCH_GLOO_INCLUDE_DIR"; exit 1; }
rc=0
configure gloo bad "$@" -DHPCLAUNCH_GLOO_INCLUDE_DIR="$base/empty" || rc=$?  # the next run sets it right again
[ "$rc" != 0 ] || { echo "FAIL: configure took a HPCLAUNCH_GLOO_INCLUDE_DIR without gloo/"; exit 1; }
echo "inner: ok"
'
out=$(unshare --mount --propagation private bash -c "$inner" _ "$base" "$HPCLAUNCH_SOURCE_DIR" "${launcher[@]}" 2>&1) ||
  fail "$out"
assert_contains "$out" "inner: ok"

# Without gloo: one line says so, names the way out, and nothing else of hpclaunch-train's mentions gloo.
said=$(grep "gloo" "$base/nogloo.log" | grep "hpclaunch-train" || true)
assert_eq 1 "$(grep -c . <<<"$said")" "lines of configure about gloo: $said"
assert_contains "$said" "-- hpclaunch-train: no gloo headers in this LibTorch (a pip wheel?): built without gloo, \
NCCL only; -DHPCLAUNCH_GLOO_INCLUDE_DIR=DIR"
symbols=$(nm -C "$base/nogloo/trainer/libhpclaunch_train_torch.a")
assert_contains "$symbols" "hpctrain::Communicator::connect" "the no-gloo library"
assert_not_contains "$symbols" "ProcessGroupGloo" "the no-gloo library"
note "ok: without gloo headers: '$said'; the trainer's library built without ProcessGroupGloo"

# What a user of that build meets (docs/trainer.md): --version says it; one CPU rank trains with no process group;
# gloo, asked for or needed by CPU ranks, is refused before anything connects, in one line with the way out.
train=$base/nogloo/trainer/hpclaunch-train
version=$("$train" --version)
assert_contains "$version" ", without gloo)" "--version"
assert_eq "${version#hpclaunch-train }" "$("$base/nogloo/trainer/hpclaunch-probe" --version | sed 's/^hpclaunch-probe //')" \
  "the probe's --version"
out=$(cd "$test_tmp" && WORLD_SIZE=1 RANK=0 "$train" --model autoencoder --synthetic --synthetic-samples 512 \
  --batch-size 64 --no-validation --threads 1 --checkpoint-dir "$test_tmp/ck" 2>&1) || fail "one CPU rank: $out"
assert_contains "$out" "done: 8 steps" "one CPU rank without gloo"
refusal="hpclaunch-train: error: --backend: gloo is not in this build (its LibTorch has no gloo headers, as the pip \
wheels); rebuild with -DHPCLAUNCH_GLOO_INCLUDE_DIR=DIR"
for ask in "WORLD_SIZE=1 --backend gloo" "WORLD_SIZE=2"; do
  read -r world flag <<<"$ask"
  rc=0
  # shellcheck disable=SC2086  # no flag: nothing
  err=$(env "$world" RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=1 timeout 60 "$train" --synthetic $flag 2>&1 >/dev/null) ||
    rc=$?
  assert_eq 2 "$rc" "exit code ($ask)"
  assert_eq 1 "$(grep -c . <<<"$err")" "lines on stderr ($ask): $err"
  assert_contains "$err" "$refusal" "$ask"
done
note "ok: the whole trainer and probe built without gloo: '$version'; one CPU rank trains; gloo refused in one line"

# With HPCLAUNCH_GLOO_INCLUDE_DIR: quiet, and the object makes a ProcessGroupGloo.
assert_not_contains "$(cat "$base/gloo.log")" "no gloo headers"
symbols=$(nm -C "$base/gloo/trainer/CMakeFiles/hpclaunch_train_torch.dir/ddp.cc.o")
assert_contains "$symbols" "c10d::ProcessGroupGloo::ProcessGroupGloo" "the object built with HPCLAUNCH_GLOO_INCLUDE_DIR"
note "ok: HPCLAUNCH_GLOO_INCLUDE_DIR=$base/gloo-include: ddp.cc compiled with ProcessGroupGloo"

# A folder without gloo/: refused in one line naming the variable.
err=$(grep -A3 "CMake Error" "$base/bad.log" | grep -v "^CMake Error" | tr -s " " | tr -d "\n")
assert_contains "$err" "HPCLAUNCH_GLOO_INCLUDE_DIR=$base/empty holds no gloo/algorithm.h"
note "ok: a folder without gloo/ refused: $err"
echo PASS
