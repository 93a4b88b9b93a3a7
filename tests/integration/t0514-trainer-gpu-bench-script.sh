#!/usr/bin/env bash
# t0514: bench/trainer/gpu.sh without a GPU (issue 10 §4): its shell parses (and passes shellcheck where
# installed); --dry-run prints the build against the machine's PyTorch and, per config (ResNet-50 and ResNet-18 at
# batch 256, ResNet-18 at 32, 3D U-Net, auto-encoder), hpclaunch-train eager, with --cuda-graphs and Python with the
# same flags three ways (the reference, a DataLoader with workers and pinned memory, the batch already on the GPU);
# a real run stops at once with one line saying there is no GPU (exit 1). The Python reference's new 3D U-Net trains a
# few CPU steps with --amp --channels-last where python3 has torch, and the auto-encoder with the DataLoader's
# workers and with the batch resident. ~30 s.
set -euo pipefail
source "$(dirname "$0")/lib-trainer.sh"
src=$HPCLAUNCH_SOURCE_DIR
gpu=$src/bench/trainer/gpu.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
bash -n "$gpu" || fail "gpu.sh does not parse"
if command -v shellcheck >/dev/null; then shellcheck -x -P "$src" "$gpu" || fail "shellcheck"; fi
PATH=/usr/bin:/bin "$gpu" --dry-run 1 >"$work/dry" || fail "dry run failed"
grep -q "^+ cmake -S $src -B .* -DCMAKE_PREFIX_PATH=\$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')" "$work/dry" ||
  fail "no cmake against torch's prefix: $(cat "$work/dry")"
# Per config: hpclaunch-train eager and with --cuda-graphs, and Python three ways: the reference (index), what
# users write (DataLoader workers, pinned) and the ceiling (the batch already on the GPU).
for model in "--resnet-depth 50 --batch-size 256" "--resnet-depth 18 --batch-size 256" "--resnet-depth 18 --batch-size 32" \
             "--model unet3d" "--model autoencoder"; do
  [ "$(grep -c -- "hpclaunch-train .*$model" "$work/dry")" = 2 ] || fail "not 2 hpclaunch-train runs of $model"
  grep -- "hpclaunch-train .*$model" "$work/dry" | grep -q -- '--cuda-graphs' || fail "no --cuda-graphs run of $model"
  for loader in "index" "workers --num-workers 8" "resident"; do
    [ "$(grep -c -- "ddp_train.py .*$model.* --device cuda --backend nccl .*--loader $loader\$" "$work/dry")" = 1 ] ||
      fail "not one Python run of $model with --loader $loader"
  done
done
grep -- '--model resnet' "$work/dry" | grep -v -q -- '--amp --channels-last' && fail "a ResNet run without bf16/channels-last"
rc=0
PATH=/usr/bin:/bin "$gpu" 1 >"$work/out" 2>"$work/err" || rc=$?
if ! command -v nvidia-smi >/dev/null; then
  [ "$rc" = 1 ] || fail "no GPU, exit $rc"
  [ "$(cat "$work/err")" = "gpu.sh: no GPU here (nvidia-smi missing or failing): nothing measured; run it on a GPU node (--dry-run prints the commands)" ] ||
    fail "no-GPU line: $(cat "$work/err")"
fi
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  source "$(dirname "$0")/lib-port.sh"
  WORLD_SIZE=1 RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=$(free_port) timeout 120 /usr/bin/python3 \
    "$src/bench/trainer/ddp_train.py" --model unet3d --unet-width 2 --crop 16 --synthetic --synthetic-samples 8 \
    --batch-size 1 --steps 3 --warmup-steps 1 --loader index --amp --channels-last >"$work/py" 2>&1 ||
    fail "ddp_train.py unet3d: $(tail -3 "$work/py")"
  grep -q '"model": "unet3d"' "$work/py" || fail "no result line: $(cat "$work/py")"
  # The new Python columns' loaders (what users write; the batch already on the device), on the CPU here.
  for loader in "workers --num-workers 2" resident; do
    # shellcheck disable=SC2086
    WORLD_SIZE=1 RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=$(free_port) timeout 120 /usr/bin/python3 \
      "$src/bench/trainer/ddp_train.py" --model autoencoder --synthetic --synthetic-samples 1024 --batch-size 64 \
      --steps 6 --warmup-steps 2 --loader $loader >"$work/py" 2>&1 || fail "ddp_train.py --loader $loader: $(tail -3 "$work/py")"
    grep -q "\"loader\": \"${loader%% *}\"" "$work/py" || fail "no result line for --loader $loader: $(cat "$work/py")"
  done
fi
echo PASS
