#!/usr/bin/env bash
# t0507: checkpoints cross the language line. A Python state dict saved the seed-000 way (torch.save of
# {"model_state": ...} from a DDP-wrapped model, so every name has "module.") loads with --resume-from; and
# Python's torch.load reads hpclaunch-train's latest.pt. Skipped without Debian's python3-torch.
set -euo pipefail
source "$(dirname "$0")/lib-trainer.sh"
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "skip: /usr/bin/python3 has no torch (python3-torch)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

/usr/bin/python3 - "$work/py.pt" <<'PY'
import sys, torch, torch.nn as nn
torch.manual_seed(5)
net = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(),
                    nn.Linear(128, 784), nn.ReLU())
state = {"module.net." + k: v for k, v in net.state_dict().items()}  # DDP(AE) names: module.net.0.weight ...
torch.save({"model_state": state, "epoch": 3}, sys.argv[1])
PY
# One SGD step with a vanishing learning rate: the weights written back are the ones loaded.
"$HPCLAUNCH_TRAIN" --synthetic --synthetic-samples 256 --batch-size 32 --steps 1 --optimizer sgd --momentum 0 \
  --lr 1e-30 --no-validation --threads 1 --resume-from "$work/py.pt" --checkpoint-dir "$work/ck" >"$work/log" 2>&1 ||
  { cat "$work/log"; fail "resume from a Python checkpoint"; }
"$HPCLAUNCH_TRAIN" compare "$work/py.pt" "$work/ck/latest.pt" --tolerance 1e-7 || fail "weights did not load"

/usr/bin/python3 - "$work/ck/latest.pt" <<'PY' || fail "torch.load cannot read latest.pt"
import sys, torch
c = torch.load(sys.argv[1])
assert c["format"] == "hpclaunch-train-checkpoint-1" and c["global_step"] == 1, c.keys()
assert c["model_state"]["net.0.weight"].shape == (128, 784)
print("python reads latest.pt:", sorted(c["model_state"].keys())[:2], "step", c["global_step"])
PY
echo PASS
