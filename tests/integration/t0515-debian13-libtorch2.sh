#!/usr/bin/env bash
# t0515: hpclaunch and its trainer built and tested against the newer libraries users have (issue 10 §3): Debian
# 12's LibTorch is 1.13; the Debian 13 root (lib-root.sh: scripts/debian13-cuda-root.sh, shared with t0513) has
# LibTorch 2.6 (built for CUDA, run here on the CPU with gloo), g++ 14, CMake 3.31, yaml-cpp 0.8, fmt 10, Boost 1.83
# and CLI11 2.4. In a mount namespace of its own the source is bound read-only into the root and BUILD-debian13
# (root_build: hpclaunch, the unit tests, hpclaunch-train and its unit tests, configured without warnings; made in
# scripts/test.sh's prepare phase) is bound as its build folder. In the root: --version names LibTorch 2.x;
# hpclaunch's unit tests pass and it renders a Slurm script; `hpclaunch agent` runs two Python torch 2.6 workers
# (gloo allreduce) and two of that trainer. The trainer's own tests there are t0513's.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-root.sh"
root_build
root=$debian13_root
build=$debian13_build

# What runs in the root (its bash, its paths; `step`: lib-root.sh), after root_build.
inside='
version=$(./trainer/hpclaunch-train --version)
echo "$version"
case $version in *"(LibTorch 2."*) ;; *) echo "FAIL: --version names no LibTorch 2.x: $version"; exit 1 ;; esac
step unit ./tests/hpclaunch_unit_tests --no-intro
echo "ok: unit tests: $(grep -h "test cases:" unit.log | tr -s " ")"
step render ./launcher/hpclaunch render --site perlmutter --nodes 2 -- python3 train.py
grep -q "^#SBATCH --nodes=2" render.log || { cat render.log; echo "FAIL: render wrote no --nodes=2"; exit 1; }
# The agent with Python torch 2.6 workers (env:// rendezvous, gloo allreduce). This LibTorch has no libuv, so
# the workers need USE_LIBUV=0: torchrun users write --rdzv-conf use_libuv=False, which the agent passes on.
ddp=$(mktemp /tmp/t0515-ddp.XXXXXX.py)
cat >"$ddp" <<PY
import torch, torch.distributed as dist
dist.init_process_group("gloo")
t = torch.ones(1) * (dist.get_rank() + 1)
dist.all_reduce(t)
print(f"rank {dist.get_rank()} of {dist.get_world_size()}: sum {t.item()} torch {torch.__version__}", flush=True)
dist.destroy_process_group()
PY
step agent-python ./launcher/hpclaunch agent --standalone --nproc-per-node 2 --rdzv-conf use_libuv=False -- python3 "$ddp"
rm -f "$ddp"
[ "$(grep -c "sum 3.0 torch 2\." agent-python.log)" = 2 ] || { cat agent-python.log; echo "FAIL: python workers"; exit 1; }
echo "ok: hpclaunch agent, 2 Python torch $(python3 -c "import torch; print(torch.__version__)" 2>/dev/null) workers"
# The agent with this trainer: its own store (the agent gives workers none), libuv dropped as above.
ck=$(mktemp -d /tmp/t0515-ck.XXXXXX)
step agent-trainer ./launcher/hpclaunch agent --standalone --nproc-per-node 2 -- ./trainer/hpclaunch-train \
  --synthetic --synthetic-samples 1024 --steps 4 --threads 1 --no-validation --checkpoint-dir "$ck"
rm -rf "$ck"
grep -q "replicas: max parameter deviation between ranks 0 (identical)" agent-trainer.log ||
  { cat agent-trainer.log; echo "FAIL: the trainer under the agent"; exit 1; }
echo "ok: hpclaunch agent, 2 hpclaunch-train workers"
'
out=$(run_in_root "$root" "$build" "$inside")
echo "$out"
assert_contains "$out" "(LibTorch 2."
assert_contains "$out" "ok: hpclaunch agent, 2 hpclaunch-train workers"
echo ok
