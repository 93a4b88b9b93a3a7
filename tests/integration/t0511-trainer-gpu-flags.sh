#!/usr/bin/env bash
# t0511: the GPU step's flags on a machine without a GPU: --amp, --channels-last, --cuda-graphs, --device cuda and
# --backend nccl are refused with one line naming the flag (exit 2, before anything connects or trains; t0513 runs
# this with the CUDA LibTorch's build too); --cuda-graphs with skip-step or --optimizer-impl loop is refused for
# its own reason only where a GPU is (gpu_policy_test.cc); --optimizer-impl takes auto|loop|foreach. A CPU run
# prints the same header as before (no gpu line). --version of the trainer and the probe (the NCCL a CUDA build
# loads). Seconds.
set -euo pipefail
source "$(dirname "$0")/lib-trainer.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
tiny=(--synthetic --synthetic-samples 256 --batch-size 32 --threads 1 --no-validation)
refused() {  # EXPECTED_LINE ARGS...: exit 2 and exactly that one line on stderr
  local want=$1 rc=0
  shift
  "$HPCLAUNCH_TRAIN" "${tiny[@]}" "$@" >"$work/out" 2>"$work/err" || rc=$?
  [ "$rc" = 2 ] || fail "$* exited $rc, not 2: $(cat "$work/err")"
  [ "$(wc -l <"$work/err")" = 1 ] || fail "$*: not one line: $(cat "$work/err")"
  [ "$(cat "$work/err")" = "$want" ] || fail "$*: said '$(cat "$work/err")', not '$want'"
  [ ! -s "$work/out" ] || fail "$*: trained or printed: $(cat "$work/out")"
  echo "ok: $* -> $want"
}
refused "hpclaunch-train: error: --cuda-graphs: only for CUDA devices and this run is on the CPU; drop the flag on CPU runs" --cuda-graphs
refused "hpclaunch-train: error: --amp: only for CUDA devices and this run is on the CPU; drop the flag on CPU runs" --amp --cuda-graphs
refused "hpclaunch-train: error: --channels-last: only for CUDA devices and this run is on the CPU; drop the flag on CPU runs" --channels-last
refused "hpclaunch-train: error: --device: cuda requested but no CUDA device is visible; use --device cpu or run on a GPU node" --device cuda --cuda-graphs
refused "hpclaunch-train: error: --device: cuda requested but no CUDA device is visible; use --device cpu or run on a GPU node" --device cuda
refused "hpclaunch-train: error: --backend: nccl needs CUDA tensors but the device is the CPU; use --backend gloo" --backend nccl
rc=0
"$HPCLAUNCH_TRAIN" "${tiny[@]}" --optimizer-impl fused >/dev/null 2>"$work/err" || rc=$?
[ "$rc" = 2 ] && grep -q -- '--optimizer-impl' "$work/err" || fail "--optimizer-impl fused: exit $rc, $(cat "$work/err")"

# --version: hpclaunch-probe names the same build as the trainer; a CUDA build names the NCCL loaded at run time
# (LibTorch's: ncclGetVersion) beside its header's; a CPU build loads none and names none.
version=$("$HPCLAUNCH_TRAIN" --version)
probe=$("$(dirname "$HPCLAUNCH_TRAIN")/hpclaunch-probe" --version) || fail "hpclaunch-probe --version: $probe"
[ "${probe#hpclaunch-probe }" = "${version#hpclaunch-train }" ] || fail "probe '$probe', trainer '$version'"
case $version in
  *", CUDA "*", NCCL "*" header, "*" loaded)") ;;
  *", CUDA "*) fail "a CUDA build names no loaded NCCL: $version" ;;
  *" loaded)") fail "a CPU build names a loaded NCCL: $version" ;;
esac
echo "ok: --version: $version; $probe"

# A CPU run: loop by default, foreach on request; the header has no gpu line.
"$HPCLAUNCH_TRAIN" "${tiny[@]}" --steps 2 >"$work/loop" 2>&1 || fail "loop run: $(cat "$work/loop")"
"$HPCLAUNCH_TRAIN" "${tiny[@]}" --steps 2 --optimizer-impl foreach >"$work/foreach" 2>&1 || fail "foreach run: $(cat "$work/foreach")"
! grep -q '  gpu:' "$work/loop" "$work/foreach" || fail "a gpu line on the CPU"
grep -q '^done: 2 steps' "$work/foreach" || fail "foreach run did not finish: $(cat "$work/foreach")"
echo PASS
