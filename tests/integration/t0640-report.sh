#!/usr/bin/env bash
# `hpclaunch report`: the page of a local job (2 emulated nodes under the agent, a metrics file with a requeued run)
# opened in headless Chromium with the network off (unshare -n): its sections are in the DOM, the screenshot is not
# blank and holds the loss curve's colour; the script's and the ranks' lines are escaped (a <b> written by the job
# shows as text). --json holds the same facts. An array gets a table of its tasks with links to their pages, which
# exist. A running job gets a page as it stands. Bad input: one line naming the flag or job, exit 2, nothing written.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
need_cmd chromium unshare file python3
src=$HPCLAUNCH_SOURCE_DIR train=${HPCLAUNCH_TRAIN:-} shot=${HPCLAUNCH_REPORT_SHOT:-}
for v in $(env | grep -oE '^(SLURM|PBS|PMI|OMPI_COMM|HPCLAUNCH_)[A-Z_]*' | grep -vx HPCLAUNCH_KEEP_TMP || true); do unset "$v"; done
unset RANK WORLD_SIZE LOCAL_RANK MASTER_ADDR MASTER_PORT
cd "$test_tmp"
hl() { "$HPCLAUNCH" "$@"; }
# Headless Chromium in a network namespace of its own (no interface up but a downed loopback): nothing can be fetched.
browser() {
  timeout 120 unshare -rn chromium --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars \
    --user-data-dir="$test_tmp/chromium" "$@" 2>>"$test_tmp/chromium.log"
}
pixels() { python3 "$src/tests/tools/png_pixels.py" "$@"; }

# Metrics as hpclaunch-train writes them (metrics/records.h): a run saved on a warning signal at step 300 (requeued)
# and the run that resumed from it; validation every 100 steps.
cat >"$test_tmp/gen.py" <<'PY'
import json, math, sys
out, steps, lr = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
t = 1_700_000_000.0
with open(out, "w") as f:
    def w(r): f.write(json.dumps(r) + "\n")
    w({"type": "run_start", "step": 0, "model": "mlp", "world_size": 2, "global_batch": 64, "time": t})
    for s in range(1, steps + 1):
        t += 0.05
        if s == steps // 2 + 1:
            w({"type": "run_end", "step": s - 1, "status": "stopped", "exit_code": 99, "time": t})
            t += 30
            w({"type": "run_start", "step": s - 1, "model": "mlp", "world_size": 2, "global_batch": 64, "time": t})
        loss = 2.5 * math.exp(-s / (steps / 4) * lr * 1000) + 0.1 + 0.05 * math.sin(s)
        w({"type": "step", "epoch": 1, "step": s, "loss": loss, "lr": lr * min(1, s / 50), "samples_per_s": 900 + 50 * math.sin(s / 7),
           "step_time_s": 0.05, "time": t})
        if s % 100 == 0:
            w({"type": "validation", "epoch": 1, "step": s, "val_loss": loss * 1.1, "time_s": 0.2, "time": t})
    w({"type": "run_end", "step": steps, "status": "done", "exit_code": 0, "time": t})
PY

# A job of 2 emulated nodes x 1 worker under the agent: each rank writes a line with markup in it.
hl submit --site local --nodes 2 --gpus-per-node 1 --name '<report>' --job-dir "$test_tmp/job" \
  -- bash -c 'echo "rank $RANK says <b>bold</b> & done"; [ "$RANK" != 0 ] || python3 '"$test_tmp"'/gen.py "$HPCLAUNCH_JOB_DIR/metrics.jsonl" 600 1e-3' \
  >/dev/null 2>"$test_tmp/err" || fail "local job failed: $(cat "$test_tmp/err")"
id=$(sed -n 's/.*"job_id": "\(local-[0-9-]*\)".*/\1/p' "$test_tmp/job/job.json")
out=$(hl report "$id") || fail "report $id failed: $out"
assert_eq "$test_tmp/job/report.html" "$out" "report's output path"
page=$test_tmp/job/report.html
assert_not_contains "$(cat "$page")" "<b>bold</b>" "a job's markup is escaped"
assert_contains "$(cat "$page")" "says &lt;b&gt;bold&lt;/b&gt; &amp; done" "the ranks' lines, escaped"
assert_not_contains "$(cat "$page")" "<script" "no script in the page"

# The DOM as Chromium reads it, offline.
dom=$(browser --dump-dom "file://$page") || fail "chromium --dump-dom failed: $(tail -5 "$test_tmp/chromium.log")"
for section in request timeline ranks curves preflight usage script; do
  assert_contains "$dom" "<section id=\"$section\">" "section $section in the DOM"
done
assert_contains "$dom" "<h1>Job $id: <span class=\"state ok\">COMPLETED</span></h1>"
assert_contains "$dom" "run 0 stopped by a signal at step 300 (exit 99)" "the requeue on the timeline"
assert_contains "$dom" "run 1 resumed from step 300 (2 workers)"
assert_contains "$dom" "run 1 completed at step 600"
assert_contains "$dom" "rank 1 says &lt;b&gt;bold&lt;/b&gt; &amp; done" "rank 1's last line"
assert_contains "$dom" "exited 0 (the job completed)"
assert_contains "$dom" "no preflight ran"
assert_contains "$dom" "not recorded: hpclaunch asks local only for a job's state and exit code"
assert_contains "$dom" "echo \"rank \$RANK says &lt;b&gt;bold" "the script, escaped"
[ "$(grep -o '<svg' <<<"$dom" | wc -l)" = 3 ] || fail "expected 3 charts (loss, lr, samples/s) in the DOM"

# The screenshot: not blank, and the loss curve (its colour, #1f77b4) drawn.
browser --screenshot="$test_tmp/shot.png" --window-size=1200,2600 "file://$page" >/dev/null ||
  fail "chromium --screenshot failed: $(tail -5 "$test_tmp/chromium.log")"
assert_contains "$(file "$test_tmp/shot.png")" "PNG image data, 1200 x 2600"
white=$(pixels "$test_tmp/shot.png" 255 255 255)
[ "$white" -lt $((1200 * 2600 * 97 / 100)) ] || fail "the screenshot is blank: $white of $((1200 * 2600)) pixels white"
blue=$(pixels "$test_tmp/shot.png" 31 119 180)
[ "$blue" -gt 1500 ] || fail "the loss curve's colour covers only $blue pixels of the screenshot"
orange=$(pixels "$test_tmp/shot.png" 255 127 14)
[ "$orange" -gt 100 ] || fail "the validation's colour covers only $orange pixels of the screenshot"
note "screenshot: $white white, $blue loss-curve and $orange validation pixels"
[ -z "$shot" ] || cp "$test_tmp/shot.png" "$shot"  # HPCLAUNCH_REPORT_SHOT=FILE keeps it (docs/images/report.png)

# --json: the same facts.
hl report "$id" --json >"$test_tmp/report.json" || fail "report --json failed"
python3 - "$test_tmp/report.json" "$id" <<'PY' || fail "report --json: $(head -c 400 "$test_tmp/report.json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["schema"] == "hpclaunch.report/1", j["schema"]
assert j["job_id"] == sys.argv[2]
assert j["state"]["phase"] == "completed", j["state"]
assert j["plan"]["nodes"] == 2 and j["plan"]["job_name"] == "<report>", j["plan"]
assert [e["kind"] for e in j["timeline"]] == ["run", "requeue", "run", "end"], j["timeline"]
assert j["timeline"][2]["wall_s"] > 30, j["timeline"][2]
assert sorted(r["rank"] for r in j["ranks"]) == [0, 1], j["ranks"]
assert "<b>bold</b>" in j["ranks"][1]["last_lines"][-1]
f = {c["field"]: c for c in j["curves"]["fields"]}
assert f["loss"]["points"] == 600 and f["val_loss"]["points"] == 6, f.keys()
assert j["curves"]["runs"] == 2
assert j["preflight"] is None and j["tasks"] == []
PY
hl report "$id" --json -o "$test_tmp/r.json" >/dev/null || fail "report --json -o failed"
cmp -s "$test_tmp/r.json" "$test_tmp/report.json" || fail "--json -o wrote another document than stdout"

# An array: a table of its tasks, each with its best validation loss and a link to its page.
hl submit --site local --nodes 1 --launcher srun --sweep lr=1e-3,3e-3,1e-2 --job-dir "$test_tmp/sweep" \
  -- bash -c 'python3 "$0" "$HPCLAUNCH_JOB_DIR/metrics.jsonl" 400 "$1"' "$test_tmp/gen.py" '{lr}' >/dev/null 2>"$test_tmp/err" || fail "array job failed: $(cat "$test_tmp/err")"
out=$(hl report "$test_tmp/sweep" -o "$test_tmp/sweep.html") || fail "report of the array failed: $out"
assert_eq "$test_tmp/sweep.html" "$out"
dom=$(browser --dump-dom "file://$test_tmp/sweep.html") || fail "chromium --dump-dom of the array's page failed"
assert_contains "$dom" "<section id=\"tasks\"><h2>Tasks (3)</h2>"
for i in 0 1 2; do
  assert_contains "$dom" "<a href=\"sweep/tasks/$i/report.html\">report</a>" "task $i's link"
  assert_file "$test_tmp/sweep/tasks/$i/report.html"
done
assert_contains "$dom" "<tr class=\"best\"><td>2</td>" "the best task (the highest lr here) marked"
assert_contains "$(cat "$test_tmp/sweep/tasks/1/report.html")" "run 1 resumed from step 200" "a task's own page"

# A job still running: its page as it stands.
hl submit --site local --nodes 1 --launcher srun --detach --job-dir "$test_tmp/running" \
  -- bash -c 'python3 '"$test_tmp"'/gen.py "$HPCLAUNCH_JOB_DIR/metrics.jsonl" 200 1e-3; sleep 60' >/dev/null 2>&1 ||
  fail "submit --detach failed"
wait_until 30 "the running job's metrics" "test -s '$test_tmp/running/metrics.jsonl'"
hl report "$test_tmp/running" >/dev/null || fail "report of a running job failed"
r=$(cat "$test_tmp/running/report.html")
assert_contains "$r" "RUNNING"
assert_contains "$r" "the job has not ended: this page shows it as it stands"
hl cancel "$test_tmp/running" >/dev/null 2>&1 || fail "cancel failed"

# docs/following-jobs.md's lines, as written (a short hpclaunch-train run of 2 nodes), in a directory of their own.
mapfile -t lines < <(python3 "$src/tests/tools/doc_commands.py" "$src" --run-by t0640)
assert_eq 3 "${#lines[@]}" "command lines docs/following-jobs.md and README.md mark 'run by t0640'"
if [ -n "$train" ] && [ -x "$train" ]; then
  mkdir -p "$test_tmp/doc/bin" && ln -s "$HPCLAUNCH" "$test_tmp/doc/bin/hpclaunch" && ln -s "$train" "$test_tmp/doc/bin/hpclaunch-train"
  # README's report line comes before the documents' submit: the submits first, then every other line.
  for line in "${lines[@]%%  # run by t0640}"; do [[ $line == *" submit "* ]] && echo "$line"; done >"$test_tmp/doc.lines"
  for line in "${lines[@]%%  # run by t0640}"; do [[ $line == *" submit "* ]] || echo "$line"; done >>"$test_tmp/doc.lines"
  while IFS= read -r line; do
    (cd "$test_tmp/doc" && PATH=$test_tmp/doc/bin:$PATH bash -c "$line") >"$test_tmp/doc.out" 2>&1 ||
      fail "the documented line failed: $line
$(tail -5 "$test_tmp/doc.out")"
  done <"$test_tmp/doc.lines"
  assert_contains "$(cat "$test_tmp/doc/first.html")" "<section id=\"curves\">"
  [ "$(grep -o '<svg' "$test_tmp/doc/first.html" | wc -l)" = 3 ] || fail "the documented report has no curves"
else
  skip_part "the documented lines (they train with hpclaunch-train, not built: HPCLAUNCH_TRAIN='$train')"
fi

# Bad input: one line naming what is wrong, exit 2, nothing written.
assert_bad() {  # EXPECTED-MESSAGE ARGS...
  local want=$1 rc=0
  shift
  hl report "$@" >"$test_tmp/out" 2>"$test_tmp/err" || rc=$?
  assert_eq 2 "$rc" "exit code of report $*"
  assert_eq 1 "$(wc -l <"$test_tmp/err")" "lines on stderr of report $*: $(cat "$test_tmp/err")"
  assert_contains "$(cat "$test_tmp/err")" "$want"
}
assert_bad "hpclaunch: error: no-such-job" no-such-job
assert_bad "--output: the directory of '$test_tmp/nowhere/r.html' does not exist" "$id" -o "$test_tmp/nowhere/r.html"
[ ! -e "$test_tmp/nowhere" ] || fail "a bad -o left something behind"
assert_bad "--output: '$test_tmp' is a directory" "$id" -o "$test_tmp"
mkdir "$test_tmp/ro" && chmod 555 "$test_tmp/ro"
if [ "$(id -u)" != 0 ]; then
  assert_bad "--output: cannot write $test_tmp/ro/r.html" "$id" -o "$test_tmp/ro/r.html"
  [ -z "$(ls -A "$test_tmp/ro")" ] || fail "a refused write left $(ls -A "$test_tmp/ro")"
fi
echo "PASS $test_name"
