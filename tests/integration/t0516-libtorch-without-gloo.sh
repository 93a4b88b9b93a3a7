#!/usr/bin/env bash
# t0516: the trainer as a pip wheel user builds it by default: against torch 2.15 from PyPI (the peers' venv), whose
# torch/include has no gloo headers (wheel_build, lib-wheel.sh; made in scripts/test.sh's prepare phase). Configure
# says so in one line and names HPCLAUNCH_GLOO_INCLUDE_DIR; hpclaunch-train and hpclaunch-probe build and link with
# no ProcessGroupGloo, and run as a wheel user meets them: --version says "without gloo", one CPU rank trains (no
# process group), and --backend gloo or two CPU ranks are refused in one line, exit 2 (the decision itself is
# gpu_policy_test.cc's). Configure refuses, each in one line: a HPCLAUNCH_GLOO_INCLUDE_DIR without gloo/, an NCCL
# header of another version than the NCCL torch loads (the machine's CUDA 13.0 ships NCCL 2.28's, the wheel loads
# 2.30: the process group's options would be laid out by the wrong header), and a CUDA toolkit of another version
# than torch's CUDA (the machine's 13.0 for the wheel's 13.2). The same build with Debian's gloo headers and the
# whole trainer suite is t0513's. Under a minute after the prepare phase (three configures).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-wheel.sh"
[ -n "${HPCLAUNCH_TRAIN:-}" ] || skip "built without LibTorch: no trainer to configure"
build=$HPCLAUNCH_BUILD_DIR-wheel-nogloo
# Without the tests: no precompiled torch/torch.h, whose writing costs GCC more than this build's three units save.
wheel_build "$build" "hpclaunch-train hpclaunch-probe" -DHPCLAUNCH_BUILD_TESTS=OFF

# Without gloo: one line says so, names the way out, and nothing else of hpclaunch-train's mentions gloo (but the
# summary of what it is built with, which --version repeats).
said=$(grep "gloo" "$build/configure.log" | grep "hpclaunch-train" | grep -v "NCCL backend enabled" | sort -u || true)
assert_eq 1 "$(grep -c . <<<"$said")" "lines of configure about gloo: $said"
assert_contains "$said" "-- hpclaunch-train: no gloo headers in this LibTorch (a pip wheel?): built without gloo, \
NCCL only; -DHPCLAUNCH_GLOO_INCLUDE_DIR=DIR"
symbols=$(nm -C "$build/trainer/libhpclaunch_train_torch.a")
assert_contains "$symbols" "hpctrain::Communicator::connect" "the no-gloo library"
assert_not_contains "$symbols" "ProcessGroupGloo" "the no-gloo library"
note "ok: without gloo headers: '$said'; the trainer's library built without ProcessGroupGloo"

# What a user of that build meets (docs/trainer.md): --version says it; one CPU rank trains with no process group;
# gloo, asked for or needed by CPU ranks, is refused before anything connects, in one line with the way out.
train=$build/trainer/hpclaunch-train
version=$("$train" --version)
torch_version=$("$wheel_python" -c 'import torch; print(torch.__version__.split("+")[0])')
assert_contains "$version" "(LibTorch $torch_version, without gloo, " "--version"
assert_eq "${version#hpclaunch-train }" "$("$build/trainer/hpclaunch-probe" --version | sed 's/^hpclaunch-probe //')" \
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

# refused ARGS...: configure (in a folder of its own, anew) fails; prints its error.
prefix=$("$wheel_python" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')
refused() {
  local dir=$test_tmp/configure rc=0
  rm -rf "$dir"
  cmake -S "$HPCLAUNCH_SOURCE_DIR" -B "$dir" -DCMAKE_PREFIX_PATH="$prefix" -DHPCLAUNCH_PLOT=OFF "$@" \
    >"$dir.log" 2>&1 || rc=$?
  [ "$rc" != 0 ] || fail "configure took $*"
  # The error's text, as CMake wraps it, on one line
  sed -n '/^CMake Error/,/^$/p' "$dir.log" | sed 1d | tr -s ' \n' ' '
}
err=$(refused -DHPCLAUNCH_GLOO_INCLUDE_DIR="$test_tmp")
assert_contains "$err" "HPCLAUNCH_GLOO_INCLUDE_DIR=$test_tmp holds no gloo/algorithm.h"
note "ok: a folder without gloo/ refused: $err"

# The machine's CUDA 13.0 ships an NCCL header of its own; the wheel loads the nvidia-nccl wheel's libnccl.
other=/usr/local/cuda/include
header=$(sed -n 's/^#define NCCL_\(MAJOR\|MINOR\|PATCH\) *\([0-9]*\).*/\2/p' "$other/nccl.h" | paste -sd.)
nccl=$("$wheel_python" -c 'import torch; print(".".join(map(str, torch.cuda.nccl.version())))')
[ "$header" != "$nccl" ] || fail "$other/nccl.h is NCCL $nccl, torch's own: nothing to refuse here"
err=$(refused -DHPCTRAIN_NCCL_INCLUDE_DIR="$other")
assert_contains "$err" "hpclaunch-train: $other/nccl.h is NCCL $header but torch loads NCCL $nccl"
note "ok: another NCCL's header refused: $err"

# The machine's CUDA toolkit (13.0) is not the wheel's (13.2): its headers are refused.
cuda=$("$wheel_python" -c 'import torch; print(torch.version.cuda)')
machine=$(/usr/local/cuda/bin/nvcc --version | sed -n 's/.*release \([0-9.]*\),.*/\1/p')
[ "$machine" != "$cuda" ] || fail "the machine's CUDA is torch's ($cuda): nothing to refuse here"
err=$(refused -DCUDA_TOOLKIT_ROOT_DIR=/usr/local/cuda -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
assert_contains "$err" "runs on CUDA $cuda (its nvidia-* wheels) but the CUDA toolkit found is $machine"
note "ok: another CUDA toolkit refused: $err"
echo PASS
