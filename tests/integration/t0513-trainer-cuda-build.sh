#!/usr/bin/env bash
# t0513: the trainer's GPU half compiled, linked and CPU-tested against a real CUDA LibTorch (issue 25). In the Debian
# 13 root that scripts/debian13-cuda-root.sh makes (scripts/test.sh puts it in /opt/hpclaunch/debian13-cuda-root:
# libtorch-cuda-dev 2.6, CUDA 12.4, NCCL 2.22, libcuda1; no cuDNN, see docs/trainer.md) everything the trainer has is
# configured with torch_cuda found and built with warnings as errors (CMAKE_COMPILE_WARNING_AS_ERROR; LibTorch's headers
# are system headers): the NCCL backend (ddp.cc through c10d_compat.h), cuda_graph.cc, the GPU step (step.cc, device.cc,
# optimizer.cc) and hpclaunch-probe with its NCCL allreduce, linked into the real executables (libtorch_cuda among their
# needed libraries, ProcessGroupNCCL and CUDAGraph among the symbols they take from it). `--version` names LibTorch 2.6,
# CUDA 12.4 and NCCL 2.22 (header and loaded). With no GPU (torch::cuda::is_available() false) the trainer's test suite
# passes unchanged with that build: its unit tests and its integration scripts (t0509, which compiles against other
# LibTorches, and t0513-t0515, which build, aside; t0507 with Python torch 2.6 too); --device cuda, --amp, --cuda-graphs
# and --backend nccl each give one line and exit 2 (t0511), as does the probe's --backend nccl; and bench/trainer/gpu.sh
# --root configures and builds there (the same build folder, so nothing is compiled twice) and stops with its "no GPU"
# line. Never run on a GPU. Source read-only at /src, BUILD-debian13 (root_build in lib-root.sh, shared with t0515; made
# in scripts/test.sh's prepare phase) at /build, in a mount namespace of its own. The tests ~2-3 min (docs/install.md,
# "Tests and their cost").
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-root.sh"
root_build
root=$debian13_root
build=$debian13_build

# What runs in the root (its bash, its paths; `step`: lib-root.sh), after root_build.
inside='
grep -q "hpclaunch-train: CUDA LibTorch: NCCL backend enabled" configure.log ||
  { cat configure.log; echo "FAIL: torch_cuda not found: the CUDA side is not built"; exit 1; }
for exe in trainer/hpclaunch-train trainer/hpclaunch-probe; do
  # Each tool output is read whole before grep looks: `tool | grep -q` fails under pipefail when grep stops
  # early and the tool dies of SIGPIPE.
  needed=$(readelf -d "$exe")
  grep -q "NEEDED.*\[libtorch_cuda.so" <<<"$needed" || { echo "FAIL: $exe does not link libtorch_cuda"; exit 1; }
  undefined=$(nm -DC --undefined-only "$exe")
  grep -q "c10d::ProcessGroupNCCL::ProcessGroupNCCL" <<<"$undefined" ||
    { echo "FAIL: $exe takes no ProcessGroupNCCL from LibTorch"; exit 1; }
done
undefined=$(nm -DC --undefined-only trainer/hpclaunch-train)
grep -q "at::cuda::CUDAGraph::capture_begin" <<<"$undefined" ||
  { echo "FAIL: hpclaunch-train takes no CUDAGraph from LibTorch"; exit 1; }
echo "ok: hpclaunch-train and hpclaunch-probe link libtorch_cuda (ProcessGroupNCCL; CUDAGraph in the trainer)"
version=$(./trainer/hpclaunch-train --version)
echo "$version"
# the NCCL it was compiled with and the one ncclGetVersion reports at run time (one libnccl in Debian: the same)
case $version in *"(LibTorch 2.6."*", CUDA 12.4, NCCL 2.22."*" header, 2.22."*" loaded)") ;;
  *) echo "FAIL: --version: $version"; exit 1 ;; esac
python3 -c "import sys, torch; sys.exit(1 if torch.cuda.is_available() else 0)" ||
  { echo "FAIL: a GPU is visible: this test is for machines without one"; exit 1; }
step trainer-unit ./trainer/hpclaunch_trainer_tests --no-intro
echo "ok: trainer unit tests: $(grep -h "test cases:" trainer-unit.log | tr -s " ")"
export HPCLAUNCH_TRAIN=/build/trainer/hpclaunch-train HPCLAUNCH_SOURCE_DIR=/src HPCLAUNCH_BUILD_DIR=/build
# Not here: t0509 (compiles against other LibTorches) and t0513/t0514 (this test, gpu.sh: below). t0507 runs: Python
# torch 2.6 (python3-torch-cuda here, weights_only=True by default) loads the trainer'"'"'s latest.pt, written without
# the type tags torch::pickle_save puts on dicts (docs/trainer.md, "Checkpoints").
for t in /src/tests/integration/t05*-trainer-*.sh; do
  name=$(basename "$t" .sh)
  case $name in t0509-* | t0513-* | t0514-*) continue ;; esac
  step "$name" bash "$t"
  echo "ok: $name"
done
# The probe (hpclaunch check): two ranks over gloo with this build, and one line for --backend nccl.
source /src/tests/integration/lib-port.sh
port=$(free_port)
pids=()
for r in 0 1; do
  WORLD_SIZE=2 RANK=$r LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=$port timeout 120 \
    ./trainer/hpclaunch-probe --max-bytes 4096 >"probe.$r.log" 2>&1 &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || { cat probe.*.log; echo "FAIL: the probe over gloo"; exit 1; }; done
grep -q "^# allreduce (gloo, 2 ranks)" probe.0.log || { cat probe.0.log; echo "FAIL: the probe said nothing of gloo"; exit 1; }
rc=0
./trainer/hpclaunch-probe --backend nccl >probe-nccl.out 2>probe-nccl.err || rc=$?
[ "$rc" = 2 ] && [ "$(wc -l <probe-nccl.err)" = 1 ] && grep -q "^hpclaunch-probe: error: --backend: " probe-nccl.err ||
  { cat probe-nccl.err; echo "FAIL: hpclaunch-probe --backend nccl without a GPU: exit $rc"; exit 1; }
echo "ok: hpclaunch-probe: 2 ranks over gloo; --backend nccl: $(cat probe-nccl.err)"
'
out=$(run_in_root "$root" "$build" "$inside")
echo "$out"
assert_contains "$out" ", CUDA 12.4, NCCL 2.22."
assert_contains "$out" "ok: t0511-trainer-gpu-flags"
assert_contains "$out" "ok: hpclaunch-probe: 2 ranks over gloo"

# bench/trainer/gpu.sh in the same root and build folder: it configures and builds (nothing left to compile) and
# stops before timing anything.
rc=0
BUILD_DIR=$build "$HPCLAUNCH_SOURCE_DIR/bench/trainer/gpu.sh" --root "$root" 1 >"$build/gpu-sh.out" 2>"$build/gpu-sh.err" || rc=$?
[ "$rc" = 1 ] || { cat "$build/gpu-sh.out" "$build/gpu-sh.err"; fail "gpu.sh --root without a GPU exited $rc, not 1"; }
grep -q "^-- hpclaunch-train: CUDA LibTorch: NCCL backend enabled" "$build/gpu-sh.out" ||
  { cat "$build/gpu-sh.out"; fail "gpu.sh --root did not configure against the CUDA LibTorch"; }
grep -q "Built target hpclaunch-train" "$build/gpu-sh.out" || { cat "$build/gpu-sh.out"; fail "gpu.sh --root built nothing"; }
err=$(tail -1 "$build/gpu-sh.err")  # after CMake's warnings from TorchConfig.cmake (under /usr)
case $err in
  "gpu.sh: no GPU here (torch.cuda.is_available() is False in the Debian 13 CUDA root): built hpclaunch-train "*"(LibTorch 2.6."*", CUDA 12.4, NCCL 2.22."*"); nothing measured; run it on a GPU node") ;;
  *) fail "gpu.sh --root's no-GPU line: $err" ;;
esac
echo "ok: gpu.sh --root: $err"
echo ok
