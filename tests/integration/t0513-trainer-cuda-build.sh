#!/usr/bin/env bash
# t0513: the trainer built against torch 2.15 from PyPI, the version users have (the peers' venv: the CUDA 13.2
# build, with NCCL 2.30 and the CUDA libraries as nvidia-* wheels, and nvidia-cuda-nvcc so that the wheels are
# the CUDA toolkit TorchConfig.cmake asks for), and tested with that build on the CPU. The wheel ships no gloo
# headers: Debian's (libgloo-dev, -DHPCLAUNCH_GLOO_INCLUDE_DIR=/usr/include) are named, as docs/trainer.md tells
# wheel users who want CPU ranks. wheel_build (lib-wheel.sh; made in scripts/test.sh's prepare phase) configures it
# with warnings as errors and builds everything the trainer has: the NCCL backend (ddp.cc through c10d_compat.h),
# cuda_graph.cc, copy_stream.cc, the GPU step and hpclaunch-probe with its NCCL allreduce, as C++20 (2.15's headers
# need it). Here: the executables link libtorch_cuda (ProcessGroupNCCL, CUDAGraph and ProcessGroupGloo taken from
# it), load no CUDA library but the wheels' (none of the machine's CUDA 13.0), and define none of gloo's GlooStore
# (the one class Debian's older gloo headers would lay out differently from torch's own gloo); --version names
# torch's version, CUDA and NCCL as the venv's torch reports them. With no GPU the trainer's test suite passes with
# that build: its unit tests and its integration scripts (t0502: two gloo ranks end bit-identical and equal to one
# process; t0511: the GPU flags refused in one line), the probe over two gloo ranks (--backend nccl refused in one
# line), and `hpclaunch agent` with two trainer workers. Never run on a GPU. The tests ~3 min (docs/install.md).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-wheel.sh"
[ -n "${HPCLAUNCH_TRAIN:-}" ] || skip "built without LibTorch: no trainer to test"
build=$HPCLAUNCH_BUILD_DIR-wheel-gloo
wheel_build "$build" "hpclaunch-train hpclaunch-probe hpclaunch_trainer_tests" -DHPCLAUNCH_BUILD_TESTS=ON \
  -DHPCLAUNCH_GLOO_INCLUDE_DIR=/usr/include
train=$build/trainer/hpclaunch-train
probe=$build/trainer/hpclaunch-probe

log=$(cat "$build/configure.log")
assert_contains "$log" "hpclaunch-train: CUDA LibTorch: NCCL backend enabled" "configure"
assert_contains "$log" "(C++20)" "configure: the language standard for torch 2.15"
assert_not_contains "$log" "no gloo headers" "configure with HPCLAUNCH_GLOO_INCLUDE_DIR"
for exe in "$train" "$probe"; do
  # Each tool's output is read whole before it is searched: `tool | grep -q` fails under pipefail when grep stops
  # early and the tool dies of SIGPIPE.
  needed=$(readelf -d "$exe")
  assert_contains "$needed" "[libtorch_cuda.so]" "$(basename "$exe")'s needed libraries"
  undefined=$(nm -DC --undefined-only "$exe")
  assert_contains "$undefined" "c10d::ProcessGroupNCCL::ProcessGroupNCCL" "$(basename "$exe") from LibTorch"
  assert_contains "$undefined" "c10d::ProcessGroupGloo::ProcessGroupGloo" "$(basename "$exe") from LibTorch"
  defined=$(nm -C --defined-only "$exe")
  assert_not_contains "$defined" "GlooStore" "$(basename "$exe"): gloo's store laid out by Debian's headers"
  libs=$(ldd "$exe")
  assert_contains "$libs" "nvidia/cu13/lib/libcudart.so" "$(basename "$exe")'s CUDA runtime"
  assert_not_contains "$libs" "/usr/local/cuda" "$(basename "$exe")'s libraries"
done
assert_contains "$(nm -DC --undefined-only "$train")" "at::cuda::CUDAGraph::capture_begin" "hpclaunch-train"
note "ok: hpclaunch-train and hpclaunch-probe link libtorch_cuda (ProcessGroupNCCL, ProcessGroupGloo; CUDAGraph in" \
  "the trainer) and the wheels' CUDA runtime"

# --version: what the venv's torch says it is, runs on and loads.
read -r torch_version cuda nccl <<<"$("$wheel_python" -c '
import torch
print(torch.__version__.split("+")[0], torch.version.cuda, ".".join(map(str, torch.cuda.nccl.version())))')"
version=$("$train" --version)
assert_contains "$version" "(LibTorch $torch_version, CUDA $cuda, NCCL $nccl header, $nccl loaded)" "--version"
assert_eq "${version#hpclaunch-train }" "$("$probe" --version | sed 's/^hpclaunch-probe //')" "the probe's --version"
"$wheel_python" -c "import sys, torch; sys.exit(1 if torch.cuda.is_available() else 0)" ||
  fail "a GPU is visible: this test is for machines without one"
note "ok: $version"

out=$("$build/trainer/hpclaunch_trainer_tests" --no-intro 2>&1) ||
  fail "the trainer's unit tests: $(tail -30 <<<"$out")"
note "ok: trainer unit tests: $(grep "test cases:" <<<"$out" | tr -s " ")"

# The trainer's integration scripts with this build. Not here: t0509 (compiles against other LibTorches), this
# test and t0516 (build against the wheel themselves), t0514 (gpu.sh: the machine's python3).
for t in "$HPCLAUNCH_SOURCE_DIR"/tests/integration/t05*-trainer-*.sh; do
  name=$(basename "$t" .sh)
  case $name in t0509-* | t0513-* | t0514-*) continue ;; esac
  out=$(HPCLAUNCH_TRAIN=$train bash "$t" 2>&1) || fail "$name with the wheel's build: $(tail -40 <<<"$out")"
  note "ok: $name"
done

# The probe (hpclaunch check): two ranks over gloo, and one line for --backend nccl.
source "$(dirname "$0")/lib-port.sh"
port=$(free_port)
pids=()
for r in 0 1; do
  WORLD_SIZE=2 RANK=$r LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=$port timeout 120 \
    "$probe" --max-bytes 4096 >"$test_tmp/probe.$r.log" 2>&1 &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || fail "the probe over gloo: $(cat "$test_tmp"/probe.*.log)"; done
assert_contains "$(cat "$test_tmp/probe.0.log")" "# allreduce (gloo, 2 ranks)" "the probe"
rc=0
"$probe" --backend nccl >"$test_tmp/probe-nccl.out" 2>"$test_tmp/probe-nccl.err" || rc=$?
err=$(cat "$test_tmp/probe-nccl.err")
assert_eq 2 "$rc" "hpclaunch-probe --backend nccl without a GPU: exit code"
assert_eq 1 "$(grep -c . <<<"$err")" "hpclaunch-probe --backend nccl: lines on stderr: $err"
assert_contains "$err" "hpclaunch-probe: error: --backend: "
note "ok: hpclaunch-probe: 2 ranks over gloo; --backend nccl: $err"

# `hpclaunch agent` with two of these trainers (their own store; the agent gives workers none).
need_hpclaunch
out=$(cd "$test_tmp" && timeout 300 "$HPCLAUNCH" agent --standalone --nproc-per-node 2 -- "$train" --synthetic \
  --synthetic-samples 1024 --steps 4 --threads 1 --no-validation --checkpoint-dir "$test_tmp/ck" 2>&1) ||
  fail "the trainer under the agent: $out"
assert_contains "$out" "replicas: max parameter deviation between ranks 0 (identical)" "under the agent"
note "ok: hpclaunch agent, 2 hpclaunch-train workers of the wheel's build"
echo PASS
