#!/usr/bin/env bash
# README command 1: install what is needed, build, and run the main job on the embedded `local` site:
# hpclaunch-train's MNIST auto-encoder on Fashion-MNIST, 2 emulated nodes x 2 workers under hpclaunch agent.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
build=${HPCLAUNCH_BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$(nproc)" --target hpclaunch hpclaunch-train
export PATH=$build/launcher:$build/trainer:$PATH

run=${HPCLAUNCH_DEMO_DIR:-$root/demo-run}
mkdir -p "$run"
cd "$run"
job=$run/hpclaunch-jobs/autoencoder-$(date +%Y%m%d-%H%M%S)
echo "hpclaunch demo: job directory $job"
set -x
hpclaunch submit --site local --nodes 2 --gpus-per-node 2 --name autoencoder --job-dir "$job" -- \
  hpclaunch-train --model autoencoder --data-dir /usr/share/datasets/fashion-mnist --epochs 2 \
  --global-batch-size 256 --metrics "$job/metrics.jsonl" --checkpoint-dir "$job/checkpoints"
