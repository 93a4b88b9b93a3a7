#!/usr/bin/env bash
# `hpclaunch plot` on metrics written by a short real hpclaunch-train run: PNG and SVG next to the metrics by
# default, or the one -o names; the files are valid (PNG signature and size from `file`, the SVG parses as XML)
# and hold the curves (the first run's colour in the PNG's pixels; a second run adds the second colour). A job
# directory is plotted from its metrics.jsonl. Bad metrics files give one line naming file:line, exit 2.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
need_cmd file
[ -n "${HPCLAUNCH_TRAIN:-}" ] && [ -x "$HPCLAUNCH_TRAIN" ] || skip "hpclaunch-train not built (HPCLAUNCH_TRAIN='${HPCLAUNCH_TRAIN:-}')"
unset RANK WORLD_SIZE LOCAL_RANK MASTER_ADDR MASTER_PORT
export XDG_STATE_HOME=$test_tmp/state
cd "$test_tmp"
hl() { "$HPCLAUNCH" "$@"; }
train() {  # METRICS LR
  "$HPCLAUNCH_TRAIN" --synthetic --synthetic-samples 512 --global-batch-size 64 --epochs 3 --warmup-steps 4 \
    --lr "$2" --threads 1 --val-batches 1 --log-every 100 --metrics "$1" >"$1.out" 2>&1 || fail "hpclaunch-train exited $?: $(cat "$1.out")"
}
train "$test_tmp/a.jsonl" 1e-3
train "$test_tmp/b.jsonl" 3e-3
assert_eq 24 "$(grep -c '"type":"step"' "$test_tmp/a.jsonl")" "step records"

# Counts the pixels of an RGB colour in a PNG.
pixels() { /usr/bin/python3 "$HPCLAUNCH_SOURCE_DIR/tests/tools/png_pixels.py" "$@"; }
svg_ok() {  # SVG: parses, and has many drawn paths
  /usr/bin/python3 -c '
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag.endswith("svg"), root.tag
paths = sum(1 for e in root.iter() if e.tag.endswith("path"))
assert paths > 50, f"only {paths} paths"
print(paths)' "$1" >/dev/null || fail "$1 is not a valid, non-trivial SVG"
}

# Default: both formats next to the metrics file.
out=$(hl plot "$test_tmp/a.jsonl") || fail "plot failed: $out"
assert_eq "$test_tmp/a.png
$test_tmp/a.svg" "$out" "files plot wrote"
assert_contains "$(file "$test_tmp/a.png")" "PNG image data, 1600 x 1500"  # three rows: loss (with validation), lr, throughput
# The smoothing's weight is TensorBoard's, 0 to 0.999; another is one line naming the flag.
rc=0
"$HPCLAUNCH" plot "$test_tmp/a.jsonl" --smooth 1.5 -o "$test_tmp/bad.png" >/dev/null 2>"$test_tmp/err" || rc=$?
assert_eq 2 "$rc" "exit code of plot --smooth 1.5"
assert_contains "$(cat "$test_tmp/err")" "hpclaunch: error: plot: --smooth: Value 1.5 not in range"
"$HPCLAUNCH" plot "$test_tmp/a.jsonl" --smooth 0 -o "$test_tmp/raw.png" >/dev/null 2>&1 || fail "plot --smooth 0 failed"
svg_ok "$test_tmp/a.svg"
[ "$(stat -c %s "$test_tmp/a.png")" -gt 30000 ] || fail "a.png is suspiciously small"
blue=$(pixels "$test_tmp/a.png" 31 119 180)
[ "$blue" -gt 2000 ] || fail "the first run's colour covers only $blue pixels of a.png: no curves?"
# A lone run's validation, over its training loss, has the second colour: its points, nothing more.
one_orange=$(pixels "$test_tmp/a.png" 255 127 14)
[ "$one_orange" -gt 0 ] || fail "no validation points (the second colour) in a one-run plot"

# Two runs on one plot, -o chooses the file and the format.
out=$(hl plot "$test_tmp/a.jsonl" "$test_tmp/b.jsonl" -o "$test_tmp/cmp.png") || fail "plot of two runs failed: $out"
assert_eq "$test_tmp/cmp.png" "$out"
[ ! -e "$test_tmp/cmp.svg" ] || fail "-o cmp.png also wrote an SVG"
orange=$(pixels "$test_tmp/cmp.png" 255 127 14)
[ "$orange" -gt $((one_orange + 2000)) ] || fail "the second run's colour covers only $orange pixels of cmp.png ($one_orange for one run's validation)"
hl plot "$test_tmp/a.jsonl" "$test_tmp/b.jsonl" -o "$test_tmp/cmp.svg" >/dev/null || fail "plot -o cmp.svg failed"
assert_contains "$(file "$test_tmp/cmp.svg")" "SVG"
svg_ok "$test_tmp/cmp.svg"

# A job directory: its metrics.jsonl.
hl submit --site local --nodes 1 --launcher srun --job-dir "$test_tmp/job" -- cp "$test_tmp/a.jsonl" "$test_tmp/job/metrics.jsonl" \
  >/dev/null 2>&1 || fail "local job failed"
assert_eq "$test_tmp/job/metrics.png
$test_tmp/job/metrics.svg" "$(hl plot "$test_tmp/job")" "plot of a job directory"
id=$(sed -n 's/.*"job_id": "\([^"]*\)".*/\1/p' "$test_tmp/job/job.json")
hl plot "$id" -o "$test_tmp/by-id.svg" >/dev/null || fail "plot by job id failed"

# A user's own log, as a Python script writes it (json.dumps: no "type", NaN for a diverged value): drawn, with
# its further field in panels of its own, and `plot` says which fields it drew.
/usr/bin/python3 - "$test_tmp/user.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    for step in range(1, 41):
        loss = float("nan") if step == 25 else 1.0 / step
        f.write(json.dumps({"step": step * 10, "epoch": step // 10, "train_loss": loss, "lr": 0.1, "accuracy": 1 - loss / 2}) + "\n")
        if step % 10 == 0:
            f.write(json.dumps({"step": step * 10, "val_loss": 1.2 / step}) + "\n")
PY
grep -q NaN "$test_tmp/user.jsonl" || fail "the user log has no NaN"
out=$(hl plot "$test_tmp/user.jsonl" -o "$test_tmp/user.png" 2>"$test_tmp/user.err") || fail "plot of a user log failed: $(cat "$test_tmp/user.err")"
assert_eq "$test_tmp/user.png" "$out"
assert_contains "$(cat "$test_tmp/user.err")" "hpclaunch: note: $test_tmp/user.jsonl: JSON lines without \"type\" (not hpclaunch-train's): drew loss, lr, accuracy, val_loss; not drawn (counters and clocks): epoch"
assert_contains "$(cat "$test_tmp/user.err")" "$test_tmp/user.jsonl: non-finite loss at step 250, marked in red"
assert_contains "$(file "$test_tmp/user.png")" "PNG image data, 1600 x 2000"  # four rows: accuracy added
[ "$(pixels "$test_tmp/user.png" 31 119 180)" -gt 2000 ] || fail "no curves in user.png"
[ "$(pixels "$test_tmp/user.png" 200 0 0)" -gt 100 ] || fail "no mark in user.png"

# Bad metrics files and outputs: one line, naming the file (and line), exit 2.
bad() {  # EXPECTED_MESSAGE FILE_CONTENT (printf format)
  printf "$2" >"$test_tmp/bad.jsonl"
  local rc=0
  hl plot "$test_tmp/bad.jsonl" >/dev/null 2>"$test_tmp/err" || rc=$?
  assert_eq 2 "$rc" "exit code for '$1'"
  assert_eq 1 "$(wc -l <"$test_tmp/err")" "error lines for '$1'"
  assert_contains "$(cat "$test_tmp/err")" "hpclaunch: error: $test_tmp/bad.jsonl$1"
}
good='{"type":"step","step":1,"loss":1}\n'
bad ": is empty" ''
bad ":2: the last line is cut short" "$good"'{"type":"step","st'
bad ":2: not a JSON object: 'oops'" "$good"'oops\n'
bad ": holds no step records" '{"type":"validation","step":1,"val_loss":1}\n'
bad ": holds no step records" '{"step":1,"name":"only text"}\n'
bad ":1: step record without a numeric \"loss\"" '{"type":"step","step":1}\n'
rm -f "$test_tmp/bad.jsonl"
assert_fails "$test_tmp/nothere.jsonl: cannot read the metrics file" hl plot "$test_tmp/nothere.jsonl"
assert_fails "--output: '$test_tmp/x.jpg' has neither a .png nor a .svg extension" hl plot "$test_tmp/a.jsonl" -o "$test_tmp/x.jpg"
assert_fails "$test_tmp/no/such/dir/x.png: cannot write the plot" hl plot "$test_tmp/a.jsonl" -o "$test_tmp/no/such/dir/x.png"
