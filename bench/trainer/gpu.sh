#!/usr/bin/env bash
# One GPU, hpclaunch-train against Python on the same model, per-GPU batch, precision (bfloat16 autocast), memory
# format, optimizer (Adam 1e-3) and synthetic data (a pool in host memory): ResNet-50 and ResNet-18 224x224 at
# batch 256, ResNet-18 at batch 32 (small steps, where CUDA graphs pay), the seed's 3D U-Net (64^3 crops, width 64)
# and the auto-encoder. hpclaunch-train runs eager and with --cuda-graphs. Python (ddp_train.py: eager DDP, no
# torch.compile) runs three ways: the reference (whole batches indexed, pinned and copied non_blocking in the
# training loop), what users write (DataLoader with num_workers=8 and pin_memory=True) and the ceiling (the same
# model stepping on one batch already on the GPU: no input cost). Each hpclaunch-train variant is reported against
# the ceiling and against the DataLoader. Builds hpclaunch-train against the machine's PyTorch first (its LibTorch,
# CUDA and NCCL). Prints a short table last and appends a section naming the GPU, driver, torch, CUDA and NCCL (the
# header's and the one loaded) to bench/trainer/RESULTS.md.
#
# Usage: bench/trainer/gpu.sh [--dry-run] [--root DIR] [REPEATS]
#   --dry-run: print the build and run commands, build and run nothing (any machine; t0514 checks it).
#   --root DIR: build and run in the Debian 13 CUDA root that scripts/debian13-cuda-root.sh makes (its CUDA
#      LibTorch 2.6, CUDA 12.4, NCCL 2.22 and python3-torch-cuda as the reference; needs root for chroot):
#      configures and builds there first, then stops with one "no GPU" line when torch sees no CUDA device
#      (t0513 runs it so). BUILD_DIR is then a folder of this machine, bound as the root's /build.
# Env: PYTHON (default python3: the PyTorch to build against and to run the reference with), BUILD_DIR (default
#      build-gpu; build-gpu-debian13 with --root), CONFIGS (subset of: resnet50 resnet18 resnet18-b32 unet3d
#      autoencoder), RESULTS (default bench/trainer/RESULTS.md), CMAKE_ARGS (more configure arguments, e.g. where
#      the launcher's libraries are: bench/trainer/gpu-machine.sh), WORKERS (the DataLoader's, default 8).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
dry=0
cuda_root=
while [ $# -gt 0 ]; do
  case $1 in
    --dry-run) dry=1; shift ;;
    --root) cuda_root=${2:?"gpu.sh: --root needs a folder (scripts/debian13-cuda-root.sh makes it)"}; shift 2 ;;
    *) break ;;
  esac
done
repeats=${1:-3}
if [ -n "$cuda_root" ]; then
  # Once more, inside the root: the source bound read-write at /src (RESULTS.md is appended to), BUILD_DIR at
  # /build, and /dev, /proc and /sys, so that a GPU's device nodes are there. The mounts die with the namespace.
  [ "$(id -u)" -eq 0 ] || { echo "gpu.sh: --root needs root (a mount namespace, chroot)" >&2; exit 1; }
  [ -f "$cuda_root/.hpclaunch-packages" ] ||
    { echo "gpu.sh: no Debian 13 CUDA root in $cuda_root; make it with scripts/debian13-cuda-root.sh $cuda_root" >&2; exit 1; }
  build_dir=${BUILD_DIR:-$root/build-gpu-debian13}
  mkdir -p "$build_dir"
  args=()
  [ "$dry" = 0 ] || args+=(--dry-run)
  # shellcheck disable=SC2016  # expanded by the inner bash
  exec unshare --mount --propagation private bash -c '
    set -e
    croot=$1 src=$2 build=$3
    shift 3
    mount --bind "$src" "$croot/src"
    mount --bind "$build" "$croot/build"
    mount --rbind /dev "$croot/dev"
    mount -t proc proc "$croot/proc"
    mount --rbind /sys "$croot/sys"
    exec chroot "$croot" "$@"
  ' _ "$cuda_root" "$root" "$build_dir" env -i PATH=/usr/bin:/bin HOME=/root TMPDIR=/tmp HPCLAUNCH_GPU_SH_IN_ROOT=1     BUILD_DIR=/build RESULTS=/src/bench/trainer/RESULTS.md CONFIGS="${CONFIGS:-}"     ${CUDA_VISIBLE_DEVICES+CUDA_VISIBLE_DEVICES="$CUDA_VISIBLE_DEVICES"}     bash /src/bench/trainer/gpu.sh "${args[@]}" "$repeats"
fi
in_root=${HPCLAUNCH_GPU_SH_IN_ROOT:-0}
py=${PYTHON:-python3}
build=${BUILD_DIR:-$root/build-gpu}
results=${RESULTS:-$here/RESULTS.md}
train=$build/trainer/hpclaunch-train
say() { printf '%s\n' "$*"; }
exec 3>&1  # the dry run's commands go to the original stdout, whatever a caller redirects
run() { if [ "$dry" = 1 ]; then printf '+ %s\n' "$*" >&3; else "$@"; fi; }

# name | hpclaunch-train and ddp_train.py flags (both) | steps | warm-up steps left out
resnet="--model resnet --image-size 224 --num-classes 1000 --synthetic --synthetic-samples 100000 --amp --channels-last"
all_configs=(
  "resnet50|$resnet --resnet-depth 50 --batch-size 256|80|15"
  "resnet18|$resnet --resnet-depth 18 --batch-size 256|120|20"
  "resnet18-b32|$resnet --resnet-depth 18 --batch-size 32|400|50"
  "unet3d|--model unet3d --unet-width 64 --crop 64 --synthetic --synthetic-samples 100000 --batch-size 1 --amp --channels-last|120|20"
  "autoencoder|--model autoencoder --synthetic --synthetic-samples 200000 --batch-size 128 --amp|1000|100"
)
cmake_args=()
read -r -a cmake_args <<<"${CMAKE_ARGS:-}"
configs=()
for c in "${all_configs[@]}"; do
  [ -z "${CONFIGS:-}" ] || [[ " $CONFIGS " == *" ${c%%|*} "* ]] && configs+=("$c")
done

if [ "$dry" = 0 ] && [ "$in_root" = 1 ]; then
  # The root has no nvidia-smi (it comes with a driver): build first, then ask its torch for a GPU (below).
  prefix=$("$py" -c 'import torch; print(torch.utils.cmake_prefix_path)')
  torch_version=$("$py" -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda, "NCCL", ".".join(map(str, torch.cuda.nccl.version())))')
elif [ "$dry" = 0 ]; then
  if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "gpu.sh: no GPU here (nvidia-smi missing or failing): nothing measured; run it on a GPU node (--dry-run prints the commands)" >&2
    exit 1
  fi
  "$py" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null ||
    { echo "gpu.sh: $py's torch sees no CUDA device (torch.cuda.is_available() is False, or no torch): load a CUDA PyTorch" >&2; exit 1; }
  prefix=$("$py" -c 'import torch; print(torch.utils.cmake_prefix_path)')
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
  torch_version=$("$py" -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda, "NCCL", ".".join(map(str, torch.cuda.nccl.version())))')
else
  prefix="\$($py -c 'import torch; print(torch.utils.cmake_prefix_path)')"
  gpu="(dry run)"
  driver="(dry run)"
  torch_version="(dry run)"
fi
run cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_PREFIX_PATH=$prefix" -DHPCLAUNCH_BUILD_TESTS=OFF \
  "${cmake_args[@]}"
run cmake --build "$build" -j "$(nproc)" --target hpclaunch-train
if [ "$dry" = 0 ] && [ "$in_root" = 1 ]; then
  if ! "$py" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    echo "gpu.sh: no GPU here (torch.cuda.is_available() is False in the Debian 13 CUDA root): built $("$train" --version); nothing measured; run it on a GPU node" >&2
    exit 1
  fi
  gpu=$("$py" -c 'import torch; print(torch.cuda.get_device_name(0))')
  driver=$(sed -n 's/.*Kernel Module  *\([0-9.]*\).*/\1/p' /proc/driver/nvidia/version 2>/dev/null || true)
fi
built="(dry run)"
[ "$dry" = 1 ] || built=$("$train" --version)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=tests/integration/lib-port.sh
source "$root/tests/integration/lib-port.sh"
# one_gpu CMD...: a world of one on GPU 0 (MASTER_* set, so the Python side forms its NCCL group as under torchrun).
one_gpu() {
  local port=29500
  [ "$dry" = 1 ] || port=$(free_port)
  run env WORLD_SIZE=1 RANK=0 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT="$port" CUDA_VISIBLE_DEVICES="${CUDA_VISIBLE_DEVICES:-0}" "$@"
}
# Samples/s from hpclaunch-train's metrics after the warm-up: global batches over the sum of step wall times.
cpp_rate() {
  "$py" - "$1" "$2" <<'PY'
import json, sys
steps = [json.loads(l) for l in open(sys.argv[1]) if '"type":"step"' in l][int(sys.argv[2]):]
print(sum(s["samples_per_s"] * s["step_time_s"] for s in steps) / sum(s["step_time_s"] for s in steps))
PY
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

# Every run of one config and repetition: hpclaunch-train eager and with graphs, then the three Python ones.
variants=(eager graphs python workers ceiling)
declare -A rate
for config in "${configs[@]}"; do
  IFS='|' read -r name flags steps warm <<<"$config"
  declare -A runs=()
  for ((rep = 1; rep <= repeats; rep++)); do
    for variant in eager graphs; do
      extra=()
      [ "$variant" = graphs ] && extra=(--cuda-graphs)
      # shellcheck disable=SC2086
      one_gpu "$train" $flags "${extra[@]}" --device cuda --backend nccl --steps "$steps" --no-validation \
        --log-every 100000 --metrics "$work/m.jsonl" >"$work/out" 2>&1 || { cat "$work/out" >&2; exit 1; }
      [ "$dry" = 1 ] && continue
      runs[$variant]+=" $(cpp_rate "$work/m.jsonl" "$warm")"
      rm -f "$work/m.jsonl"
    done
    for variant in python workers ceiling; do
      loader=(--loader index)
      [ "$variant" = workers ] && loader=(--loader workers --num-workers "${WORKERS:-8}")
      [ "$variant" = ceiling ] && loader=(--loader resident)
      # shellcheck disable=SC2086
      one_gpu "$py" "$here/ddp_train.py" $flags --device cuda --backend nccl --steps "$steps" --warmup-steps "$warm" \
        "${loader[@]}" >"$work/py" 2>&1 || { cat "$work/py" >&2; exit 1; }
      [ "$dry" = 1 ] && continue
      runs[$variant]+=" $("$py" -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])["samples_per_s"])' "$work/py")"
    done
  done
  [ "$dry" = 1 ] && continue
  for variant in "${variants[@]}"; do
    # shellcheck disable=SC2086
    rate[$name.$variant]=$(median ${runs[$variant]})
  done
done
[ "$dry" = 1 ] && exit 0

# The table: samples/s (median of REPEATS), and each hpclaunch-train variant over the ceiling and the DataLoader.
table() {
  printf '| config | Python reference | Python DataLoader (%s workers, pinned) | Python ceiling (batch on the GPU) ' "${WORKERS:-8}"
  printf '| hpclaunch-train | / ceiling | / DataLoader | --cuda-graphs | / ceiling | / DataLoader |\n'
  printf '|---|---|---|---|---|---|---|---|---|---|\n'
  for config in "${configs[@]}"; do
    local n=${config%%|*}
    printf '| %s | %.1f | %.1f | %.1f ' "$n" "${rate[$n.python]}" "${rate[$n.workers]}" "${rate[$n.ceiling]}"
    for variant in eager graphs; do
      printf '| %.1f | %sx | %sx ' "${rate[$n.$variant]}" "$(ratio "${rate[$n.$variant]}" "${rate[$n.ceiling]}")" \
        "$(ratio "${rate[$n.$variant]}" "${rate[$n.workers]}")"
    done
    printf '|\n'
  done
}
{
  printf '\n## GPU: %s, driver %s; torch %s; %s (bench/trainer/gpu.sh, %s, median of %s)\n\n' "$gpu" "$driver" \
    "$torch_version" "$built" "$(date -u +%F)" "$repeats"
  table
} >>"$results"
say "appended to $results"
say "GPU: $gpu, driver $driver; torch $torch_version; $built"
table
