#!/usr/bin/env bash
# t0512: the foreach optimizer (the GPU's default, and what --cuda-graphs captures) trains as torch::optim does,
# on two gloo ranks: Adam and SGD with momentum, 6 steps with warm-up and cosine, against --optimizer-impl loop
# (compare, 1e-5); and checkpoints cross between them: 4 steps with foreach, resumed with loop to 8, equal 8
# steps with loop (the step count and moments travel in torch::optim's format). ~40 s.
set -euo pipefail
source "$(dirname "$0")/lib-trainer.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
common=(--synthetic --synthetic-samples 512 --global-batch-size 64 --threads 1 --no-validation --warmup-steps 2
        --schedule-steps 8 --bucket-cap-mb 0.2)
for opt in adam sgd; do
  for impl in loop foreach; do
    run_ranks 2 "$work/$opt-$impl" "${common[@]}" --optimizer "$opt" --optimizer-impl "$impl" --steps 6 \
      --checkpoint-dir "$work/$opt-$impl" || fail "$opt $impl"
    grep -q 'replicas: max parameter deviation between ranks 0 (identical)' "$work/$opt-$impl.0" ||
      fail "$opt $impl: ranks differ: $(grep replicas "$work/$opt-$impl.0")"
  done
  "$HPCLAUNCH_TRAIN" compare "$work/$opt-loop/latest.pt" "$work/$opt-foreach/latest.pt" --tolerance 1e-5 ||
    fail "$opt: foreach differs from loop"
done
# foreach 4 steps, loop resumes to 8; loop 8 steps straight.
run_ranks 2 "$work/a" "${common[@]}" --optimizer-impl foreach --steps 4 --checkpoint-dir "$work/cross" || fail "foreach 4"
run_ranks 2 "$work/b" "${common[@]}" --optimizer-impl loop --steps 8 --resume --checkpoint-dir "$work/cross" || fail "loop resume"
grep -q 'resumed from .* at epoch 1, step 4' "$work/b.0" || fail "did not resume at 4: $(cat "$work/b.0")"
run_ranks 2 "$work/c" "${common[@]}" --optimizer-impl loop --steps 8 --checkpoint-dir "$work/straight" || fail "loop 8"
"$HPCLAUNCH_TRAIN" compare "$work/cross/latest.pt" "$work/straight/latest.pt" --tolerance 1e-5 ||
  fail "foreach-then-loop differs from loop"
echo PASS
