#!/usr/bin/env bash
# t0506: every model trains: ResNet (small, on Fashion-MNIST when installed; BatchNorm buffers broadcast) on two
# ranks, and the 3D U-Net (L1 on synthetic crops) and a synthetic ResNet alone; --lr-scaling sqrt with warm-up.
set -euo pipefail
source "$(dirname "$0")/lib-trainer.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
data=(--synthetic --synthetic-samples 512 --image-size 28 --num-classes 10)
[ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] && data=()

port=$(free_port)
pids=()
for r in 0 1; do
  WORLD_SIZE=2 RANK=$r LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=$port HPCLAUNCH_TRAIN_TIMEOUT_S=120 \
    timeout 300 "$HPCLAUNCH_TRAIN" --model resnet --resnet-depth 10 --resnet-width 8 "${data[@]}" \
    --global-batch-size 32 --base-batch-size 8 --lr-scaling sqrt --warmup-steps 2 --optimizer sgd --steps 4 \
    --log-every 1 --val-batches 2 --threads 1 >"$work/resnet.$r" 2>&1 &
  pids+=($!)
done
for r in 0 1; do wait "${pids[$r]}" || { cat "$work/resnet.$r"; fail "resnet rank $r exited $?"; }; done
cat "$work/resnet.0"
grep -q 'lr 0.1 -> peak 0.2' "$work/resnet.0" || fail "sqrt(32/8) scaling of lr 0.1 should give 0.2"
grep -q 'epoch 1 step 1/.* lr 1.000e-01' "$work/resnet.0" || fail "warm-up step 1 should be half the peak"
grep -q 'replicas: max parameter deviation between ranks 0 (identical)' "$work/resnet.0" || fail "ranks differ"
grep -q 'validation: epoch 1 loss' "$work/resnet.0" || fail "no validation"

timeout 300 "$HPCLAUNCH_TRAIN" --model unet3d --unet-width 4 --crop 16 --synthetic-samples 8 --batch-size 2 \
  --steps 3 --log-every 1 --threads 1 >"$work/unet" 2>&1 || { cat "$work/unet"; fail "unet3d"; }
cat "$work/unet"
grep -q 'unet3d .* on cpu' "$work/unet" && grep -q '^done: 3 steps' "$work/unet" || fail "unet3d did not train"

timeout 300 "$HPCLAUNCH_TRAIN" --model resnet --resnet-depth 18 --synthetic --synthetic-samples 64 --image-size 32 \
  --num-classes 10 --batch-size 4 --steps 2 --threads 1 --no-validation >"$work/r18" 2>&1 || { cat "$work/r18"; fail "resnet-18"; }
grep -q 'resnet (11181642 parameters)' "$work/r18" || { cat "$work/r18"; fail "ResNet-18 (10 classes) size"; }
echo PASS
