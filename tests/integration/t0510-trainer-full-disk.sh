#!/usr/bin/env bash
# t0510: a full disk while checkpointing. The checkpoint folder is a 4 MiB tmpfs: the first save (2.8 MB) fits,
# the next one cannot. hpclaunch-train stops with one error line naming the temporary file and the cause, exits
# 1, removes the partial file, and the last good latest.pt is untouched and still resumes. Needs to mount a
# tmpfs (root, as in CI); skipped (77) where mounting is not allowed.
set -euo pipefail
# The tmpfs is mounted in a mount namespace of this test's own: it ends with the test, even one killed at its time
# limit, where the EXIT trap's umount never runs (as t0492 shows for the soak's). Where no namespace can be made
# private (in t0513's chroot, whose / is no mount point: there the root's own namespace already ends with the test),
# the test mounts where it is.
if [ -z "${T0510_OWN_MOUNTS:-}" ] && [ "$(id -u)" = 0 ] && unshare --mount --propagation private true 2>/dev/null; then
  T0510_OWN_MOUNTS=1 exec unshare --mount --propagation private bash "$0" "$@"
fi
source "$(dirname "$0")/lib-trainer.sh"
work=$(mktemp -d)
mnt=$work/small
mkdir -p "$mnt"
mount -t tmpfs -o size=4m tmpfs "$mnt" 2>/dev/null || { echo "skip: cannot mount a tmpfs here"; rm -rf "$work"; exit 77; }
trap 'umount "$mnt" 2>/dev/null || true; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

args=(--model autoencoder --synthetic --synthetic-samples 1024 --global-batch-size 64 --epochs 100 --no-validation
      --threads 1 --checkpoint-every 10 --checkpoint-dir "$mnt/ck")
rc=0
"$HPCLAUNCH_TRAIN" "${args[@]}" --steps 40 >"$work/out" 2>"$work/err" || rc=$?
[ "$rc" = 1 ] || fail "exit code $rc on a full disk, expected 1: $(cat "$work/err")"
[ "$(wc -l <"$work/err")" = 1 ] || fail "expected one error line, got: $(cat "$work/err")"
grep -q "^hpclaunch-train: error: $mnt/ck/latest.pt: cannot write the checkpoint (writing its temporary file .latest.pt.tmp.[0-9]*: No space left on device); check the checkpoint folder's space and rights$" "$work/err" \
  || fail "unexpected error line: $(cat "$work/err")"
[ -z "$(ls -A "$mnt/ck" | grep -v '^latest.pt$' || true)" ] || fail "partial files left: $(ls -A "$mnt/ck")"
"$HPCLAUNCH_TRAIN" inspect "$mnt/ck/latest.pt" >"$work/inspect" || fail "latest.pt is not readable after the failed save"
grep -q '"global_step":10' "$work/inspect" || fail "latest.pt is not the step-10 checkpoint: $(cat "$work/inspect")"

# The last good checkpoint resumes elsewhere, from its step.
cp "$mnt/ck/latest.pt" "$work/saved.pt"
"${HPCLAUNCH_TRAIN}" "${args[@]:0:${#args[@]}-2}" --checkpoint-dir "$work/ck2" --resume-from "$work/saved.pt" --steps 12 \
  >"$work/resumed" 2>&1 || fail "resuming from the surviving checkpoint failed: $(cat "$work/resumed")"
grep -q "step 10" "$work/resumed" || fail "the resumed run did not start at step 10: $(cat "$work/resumed")"
echo "ok"
