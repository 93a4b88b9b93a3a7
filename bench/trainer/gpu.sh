#!/usr/bin/env bash
# One GPU, hpclaunch-train against Python on the same model, per-GPU batch, precision (bfloat16 autocast), memory
# format, optimizer (Adam 1e-3) and synthetic data (a pool in host memory). hpclaunch-train runs eager and with
# --cuda-graphs. Python (ddp_train.py: eager DDP, no torch.compile) runs three ways: the reference (whole batches
# indexed, pinned and copied non_blocking in the loop), what users write (DataLoader with num_workers=8 and
# pin_memory=True) and the ceiling (the same model stepping on one batch already on the GPU: no input cost).
#
# A GPU machine is lent for minutes, so a run must bring back whatever it measured:
# - every run has a time limit; a failed or timed-out run is recorded as such and the rest go on;
# - each figure is written to OUT the moment it is measured, as a JSON line (results.jsonl) and a table line
#   (results.md), with the run's output appended to runs.log under a header naming it (a lent machine brings back
#   at most 8 files, so the logs share one file);
# - the runs go in the order of what matters most: (1) the build; (2) hpclaunch-train eager against the ceiling,
#   ResNet-50 and ResNet-18 at batch 256, and the trainer on its own resident batch (HPCLAUNCH_TRAIN_RESIDENT_BATCH:
#   no input cost, so eager over resident is what the input path costs, and resident over the ceiling the step);
#   (3) the DataLoader peer and the reference; (4) the checks: the loader's batches against the CPU's
#   (--check-batches) and --cuda-graphs against eager (the mean loss of the last steps, same seed, on the
#   auto-encoder and ResNet-18 at batch 32; these runs are timed too); (5) the graph variants, only when the graphs
#   check passed; (6) the 3D U-Net;
# - with --budget S, a run whose estimate does not fit in what is left is skipped, and recorded as skipped.
# The table of every config (samples/s, each hpclaunch-train variant over the ceiling and the DataLoader) is
# printed last, and with --results FILE appended to it as a section naming the GPU, driver, torch, CUDA and NCCL.
#
# Usage: bench/trainer/gpu.sh [--dry-run] [--budget SECONDS] [--out DIR] [--results FILE] [REPEATS]
#   --dry-run: print the build and run commands, build and run nothing (any machine; t0514 checks it).
#   --budget SECONDS: the time the runs may take in all (default: no limit).
#   --out DIR: where the records go (default $OUT, else build-gpu-out).
#   REPEATS: runs of each measurement (default 1); the table gives the median.
# Env: PYTHON (default python3: the PyTorch to build against and to run the reference with), TRAIN (a built
#      hpclaunch-train: no build), BUILD_DIR (default build-gpu), CONFIGS (subset of: resnet50 resnet18 resnet18-b32
#      unet3d autoencoder), CMAKE_ARGS (more configure arguments: bench/trainer/gpu-machine.sh), WORKERS (the
#      DataLoader's, default 8), RUN_LIMIT (every run's time limit in seconds; default 3x its estimate, at least 60).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
dry=0
budget=0
out=${OUT:-$root/build-gpu-out}
results=
while [ $# -gt 0 ]; do
  case $1 in
    --dry-run) dry=1; shift ;;
    --budget) budget=${2:?"gpu.sh: --budget needs seconds"}; shift 2 ;;
    --out) out=${2:?"gpu.sh: --out needs a folder"}; shift 2 ;;
    --results) results=${2:?"gpu.sh: --results needs a file"}; shift 2 ;;
    -*) echo "gpu.sh: unknown option '$1': see the usage at the top of $0" >&2; exit 2 ;;
    *) break ;;
  esac
done
repeats=${1:-1}
[[ $budget =~ ^[0-9]+$ ]] || { echo "gpu.sh: --budget '$budget' is not a whole number of seconds" >&2; exit 2; }
[[ $repeats =~ ^[1-9][0-9]*$ ]] || { echo "gpu.sh: REPEATS '$repeats' is not a positive number" >&2; exit 2; }
py=${PYTHON:-python3}
build=${BUILD_DIR:-$root/build-gpu}
train=${TRAIN:-$build/trainer/hpclaunch-train}
records="python3 $here/gpu_records.py"
exec 3>&1  # the dry run's commands go to the original stdout, whatever a caller redirects
t0=$SECONDS

# name | flags of both hpclaunch-train and ddp_train.py | steps | warm-up steps left out | estimated seconds of one
# run on one H100 (startup included; from the first GPU run's rates, bench/trainer/RESULTS.md)
resnet="--model resnet --image-size 224 --num-classes 1000 --synthetic --synthetic-samples 100000 --amp --channels-last"
declare -A cfg=(
  [resnet50]="$resnet --resnet-depth 50 --batch-size 256|80|15|20"
  [resnet18]="$resnet --resnet-depth 18 --batch-size 256|120|20|15"
  [resnet18-b32]="$resnet --resnet-depth 18 --batch-size 32|400|50|15"
  [unet3d]="--model unet3d --unet-width 64 --crop 64 --synthetic --synthetic-samples 100000 --batch-size 1 --amp --channels-last|120|20|30"
  [autoencoder]="--model autoencoder --synthetic --synthetic-samples 200000 --batch-size 128 --amp|1000|100|10"
)
wanted() { [ -z "${CONFIGS:-}" ] || [[ " $CONFIGS " == *" $1 "* ]]; }

if [ "$dry" = 1 ]; then
  facts='{"cuda": true, "gpu": "(dry run)", "torch": "(dry run)", "cuda_version": "(dry run)", "nccl": "(dry run)"}'
else
  facts=$("$py" "$here/gpu_facts.py" 2>/dev/null || echo '{"cuda": false, "error": "'"$py"' did not run"}')
fi
# The facts as shell words, read once: cuda gpu torch cuda_version nccl prefix error (each a quoted word).
fact_cuda='' fact_gpu='' fact_torch='' fact_cuda_version='' fact_nccl='' fact_prefix='' fact_error=''
eval "$(python3 -c '
import json, shlex, sys
f = json.loads(sys.argv[1])
for k in ("cuda", "gpu", "torch", "cuda_version", "nccl", "prefix", "error"):
    v = f.get(k)
    print(f"fact_{k}=" + shlex.quote("" if v is None else str(v)))' "$facts")"
prefix=$fact_prefix
# shellcheck disable=SC2016  # printed, not run
[ "$dry" = 0 ] || prefix='$('"$py"' -c '"'import torch; print(torch.utils.cmake_prefix_path)'"')'
torch_version="$fact_torch CUDA $fact_cuda_version NCCL $fact_nccl"
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1 ||
  sed -n 's/.*Kernel Module  *\([0-9.]*\).*/\1/p' /proc/driver/nvidia/version 2>/dev/null || true)
no_gpu="$py's torch sees no CUDA device"
[ -z "$fact_error" ] || no_gpu="$no_gpu ($fact_error)"

# The build (1): against the PyTorch under test, unless TRAIN names a built trainer.
if [ -z "${TRAIN:-}" ]; then
  if [ "$dry" = 0 ] && [ "$fact_cuda" != True ]; then
    echo "gpu.sh: no GPU here ($no_gpu): nothing measured; run it on a GPU node (--dry-run prints the commands)" >&2
    exit 1
  fi
  cmake_args=()
  read -r -a cmake_args <<<"${CMAKE_ARGS:-}"
  if [ "$dry" = 1 ]; then
    printf '+ %s\n' "cmake -S $root -B $build -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$prefix -DHPCLAUNCH_BUILD_TESTS=OFF ${cmake_args[*]}" >&3
    printf '+ %s\n' "cmake --build $build -j $(nproc) --target hpclaunch-train" >&3
  else
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_PREFIX_PATH=$prefix" -DHPCLAUNCH_BUILD_TESTS=OFF \
      "${cmake_args[@]}"
    cmake --build "$build" -j "$(nproc)" --target hpclaunch-train
  fi
elif [ "$dry" = 0 ] && [ "$fact_cuda" != True ]; then
  echo "gpu.sh: no GPU here ($no_gpu): nothing measured; run it on a GPU node (--dry-run prints the commands)" >&2
  exit 1
fi
gpu=$fact_gpu
built="(dry run)"
[ "$dry" = 1 ] || built=$("$train" --version 2>&1 | head -1 || true)
[ "$dry" = 1 ] || mkdir -p "$out"
[ "$dry" = 1 ] || echo "gpu.sh: $gpu, driver ${driver:-unknown}; torch $torch_version; $built" | tee -a "$out/runs.log"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=tests/integration/lib-port.sh
source "$root/tests/integration/lib-port.sh"

# attempt PHASE CONFIG VARIANT ESTIMATE [RECORD_ARG...] -- CMD...: one run on GPU 0 in a world of one (MASTER_*
# set, so the Python side forms its NCCL group as under torchrun), within its time limit and the budget; its
# output is appended to runs.log and its record written at once. Returns 0 when it ran and succeeded.
attempt() {
  local phase=$1 config=$2 variant=$3 estimate=$4 left limit rc=0 start port=29500
  shift 4
  local record_args=()
  while [ "$1" != -- ]; do record_args+=("$1"); shift; done
  shift
  if [ "$dry" = 1 ]; then
    printf '+ %s\n' "$*" >&3
    return 0
  fi
  limit=${RUN_LIMIT:-$((estimate * 3 > 60 ? estimate * 3 : 60))}
  if [ "$budget" -gt 0 ]; then
    left=$((budget - (SECONDS - t0)))
    if [ "$estimate" -gt "$left" ]; then
      $records add "$out" "$phase" "$config" "$variant" skipped 0 --note "budget: about $estimate s needed, $left s left"
      return 1
    fi
    [ "$limit" -le "$left" ] || limit=$left
  fi
  port=$(free_port)
  printf '\n===== %s %s %s (limit %s s): %s\n' "$phase" "$config" "$variant" "$limit" "$*" >>"$out/runs.log"
  start=$SECONDS
  env WORLD_SIZE=1 RANK=0 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT="$port" \
    CUDA_VISIBLE_DEVICES="${CUDA_VISIBLE_DEVICES:-0}" timeout -k 10 "$limit" "$@" >"$work/run.out" 2>&1 || rc=$?
  cat "$work/run.out" >>"$out/runs.log"
  local status=ok note=()
  case $rc in
    0) ;;
    124 | 137) status=timeout; note=(--note "no result in its limit of $limit s") ;;
    *) status=failed; note=(--note "exit $rc: $(grep -v '^\s*$' "$work/run.out" | tail -1 | tr '|' '/' | cut -c1-160)") ;;
  esac
  $records add "$out" "$phase" "$config" "$variant" "$status" "$((SECONDS - start))" "${record_args[@]}" "${note[@]}"
  [ "$status" = ok ]
}
# train PHASE CONFIG VARIANT [STEPS]: hpclaunch-train on CONFIG (eager; graphs: --cuda-graphs; resident: eager on
# its first batch, kept on the GPU), for the config's steps or STEPS; its metrics in $work/CONFIG-VARIANT.jsonl.
train() {
  local phase=$1 name=$2 variant=$3 flags steps warm estimate metrics extra=() hook=()
  IFS='|' read -r flags steps warm estimate <<<"${cfg[$name]}"
  steps=${4:-$steps}
  metrics=$work/$name-$variant.jsonl
  [ "$variant" != graphs ] || extra=(--cuda-graphs)
  [ "$variant" != resident ] || hook=(env HPCLAUNCH_TRAIN_RESIDENT_BATCH=1)
  rm -f "$metrics"
  # shellcheck disable=SC2086  # flags are words
  attempt "$phase" "$name" "$variant" "$estimate" --metrics "$metrics" --warm "$warm" -- \
    "${hook[@]}" "$train" $flags "${extra[@]}" --device cuda --backend nccl --steps "$steps" --epochs 1000 --seed 1 \
    --no-validation --log-every 100000 --metrics "$metrics"
}
# peer PHASE CONFIG VARIANT: ddp_train.py on CONFIG with the variant's loader.
peer() {
  local phase=$1 name=$2 variant=$3 flags steps warm estimate loader=(--loader index)
  IFS='|' read -r flags steps warm estimate <<<"${cfg[$name]}"
  [ "$variant" != workers ] || loader=(--loader workers --num-workers "${WORKERS:-8}")
  [ "$variant" != ceiling ] || loader=(--loader resident)
  # shellcheck disable=SC2086
  attempt "$phase" "$name" "$variant" "$((estimate + 10))" --py-output "$work/run.out" -- \
    "$py" "$here/ddp_train.py" $flags --device cuda --backend nccl --steps "$steps" --warmup-steps "$warm" \
    "${loader[@]}"
}
# graphs_check NAME: eager and --cuda-graphs, same seed and data, at least 300 steps; the mean loss of the last 50
# steps within 2% (bf16 autocast). The two runs are timed as well (the config's warm-up left out).
graphs_check() {
  local name=$1 steps
  steps=$(cut -d'|' -f2 <<<"${cfg[$name]}")
  [ "$steps" -ge 300 ] || steps=300
  local ran=1
  train check "$name" eager "$steps" || ran=0
  train check "$name" graphs "$steps" || ran=0
  [ "$dry" = 1 ] && return 0
  if [ "$ran" = 0 ]; then  # a run cut short has fewer steps: its last losses are not the other's
    $records add "$out" check "$name" graphs-vs-eager failed 0 --note "not compared: a run did not finish (above)"
    return 1
  fi
  $records check "$out" "$name" 50 0.02 "$work/$name-eager.jsonl" "$work/$name-graphs.jsonl"
}

for ((rep = 1; rep <= repeats; rep++)); do
  # (2) eager against the ceiling; (3) the DataLoader users write, and the reference.
  for name in resnet50 resnet18; do
    wanted "$name" || continue
    peer eager "$name" ceiling || true
    train eager "$name" eager || true
    train eager "$name" resident || true
  done
  for name in resnet50 resnet18; do
    wanted "$name" || continue
    peer dataloader "$name" workers || true
    peer dataloader "$name" python || true
  done
done
# (4) the checks. The loader's batches as they arrive on the GPU against the CPU's.
if wanted resnet18; then
  # shellcheck disable=SC2086  # flags are words
  attempt check resnet18 check-batches 30 -- "$train" ${cfg[resnet18]%%|*} --device cuda --backend nccl --steps 40 \
    --no-validation --log-every 100000 --check-batches || true
fi
graphs_ok=() graphs_checked=0
for name in autoencoder resnet18-b32; do
  wanted "$name" || continue
  graphs_checked=1
  if graphs_check "$name"; then graphs_ok+=("$name"); fi
done
# (5) the graph variants, where the check passed; the Python columns of the small-batch configs.
for name in autoencoder resnet18-b32; do
  wanted "$name" || continue
  peer graphs "$name" ceiling || true
  peer graphs "$name" workers || true
done
if [ "${#graphs_ok[@]}" -gt 0 ] || [ "$dry" = 1 ]; then
  for name in resnet18 resnet50; do
    wanted "$name" || continue
    train graphs "$name" graphs || true
  done
else
  why="the graphs-against-eager check did not pass"
  [ "$graphs_checked" = 1 ] || why="no graphs-against-eager check ran (CONFIGS has neither autoencoder nor resnet18-b32)"
  [ "$dry" = 1 ] || $records add "$out" graphs all graph-variants skipped 0 --note "$why"
fi
# (6) the 3D U-Net.
if wanted unet3d; then
  peer unet3d unet3d ceiling || true
  train unet3d unet3d eager || true
  [ "${#graphs_ok[@]}" -eq 0 ] || train unet3d unet3d graphs || true
fi
[ "$dry" = 1 ] && exit 0

echo
echo "GPU: $gpu, driver ${driver:-unknown}; torch $torch_version; $built; $((SECONDS - t0)) s of runs"
$records summary "$out" >"$work/summary.md"
cat "$work/summary.md"
if [ -n "$results" ]; then
  {
    printf '\n## GPU: %s, driver %s; torch %s; %s (bench/trainer/gpu.sh, %s, median of %s)\n\n' "$gpu" \
      "${driver:-unknown}" "$torch_version" "$built" "$(date -u +%F)" "$repeats"
    cat "$work/summary.md"
  } >>"$results"
  echo "appended to $results"
fi
