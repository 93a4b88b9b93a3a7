#!/usr/bin/env bash
# bench/report/run.sh [REPEATS] [LABEL=HPCLAUNCH...]: how long `hpclaunch report` takes on the two large cases issue
# 54 names: a job whose metrics file holds 100,000 steps (and 1,000 validations), and an array of 1,000 tasks (each
# with a 400-step metrics file; the array's page and its 1,000 task pages). Both are local-site jobs made here; the
# timings are the median of REPEATS runs (default 5) of the whole command, wall clock, and its maximum, with its CPU
# time (user + system, all threads) beside them. The array's first report (no pages yet) is timed on REPEATS arrays
# made for it, one report each; a report again, over its pages, on one of them. Each LABEL=HPCLAUNCH (e.g.
# before=/path/to/main/hpclaunch after=build/launcher/hpclaunch) is timed in turn, with `uptime` before each; default:
# HPCLAUNCH, else this checkout's build. Results: bench/report/RESULTS.md.
set -euo pipefail
repeats=${1:-5}
shift || true
root=$(cd "$(dirname "$0")/../.." && pwd)
builds=("$@")
[ ${#builds[@]} -gt 0 ] || builds=("this=${HPCLAUNCH:-$root/build/launcher/hpclaunch}")
for i in "${!builds[@]}"; do
  b=${builds[$i]}
  [ -x "${b#*=}" ] || { echo "run.sh: no hpclaunch at ${b#*=} (build first, or name it: LABEL=PATH)" >&2; exit 2; }
  builds[$i]=${b%%=*}=$(realpath "${b#*=}")  # the runs are in a temporary folder
done
tmp=$(mktemp -d /tmp/hpclaunch-bench-report.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export XDG_STATE_HOME=$tmp/state XDG_CONFIG_HOME=$tmp/config
for v in $(env | grep -oE '^(SLURM|PBS|PMI|OMPI_COMM|HPCLAUNCH_)[A-Z_]*' || true); do unset "$v"; done
cd "$tmp"

metrics() {  # FILE STEPS
  python3 - "$1" "$2" <<'PY'
import json, math, sys
path, steps = sys.argv[1], int(sys.argv[2])
t = 1_700_000_000.0
with open(path, "w") as f:
    f.write(json.dumps({"type": "run_start", "step": 0, "model": "mlp", "world_size": 8, "global_batch": 256, "time": t}) + "\n")
    for s in range(1, steps + 1):
        t += 0.1
        loss = 2.0 * math.exp(-s / (steps / 5)) + 0.1 + 0.02 * math.sin(s)
        f.write(json.dumps({"type": "step", "epoch": s // 1000, "step": s, "loss": loss, "lr": 1e-3, "samples_per_s": 2500.0,
                            "step_time_s": 0.1, "allreduce_s": 0.01, "data_wait_s": 0.001, "cpu_s": 0.2, "time": t}) + "\n")
        if s % 100 == 0:
            f.write(json.dumps({"type": "validation", "epoch": s // 1000, "step": s, "val_loss": loss * 1.1, "time_s": 1.0, "time": t}) + "\n")
    f.write(json.dumps({"type": "run_end", "step": steps, "status": "done", "exit_code": 0, "time": t}) + "\n")
PY
}

# timed LABEL CMD...: the median and the maximum of `repeats` runs, in seconds, and the median CPU time. A CMD
# holding {} is run once for each of the `repeats` arrays in $arrays, {} replaced by the array.
timed() {
  local label=$1
  shift
  python3 - "$repeats" "$@" <<'PY' | sed "s/^/$label /"
import os, statistics, subprocess, sys, time
n, cmd = int(sys.argv[1]), sys.argv[2:]
targets = os.environ["arrays"].split() if "{}" in cmd else [None] * n
wall, cpu = [], []
for target in targets[:n]:
    argv = [target if a == "{}" else a for a in cmd]
    t = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    wall.append(time.perf_counter() - t)
    cpu.append(usage.ru_utime + usage.ru_stime)
    if status != 0:
        sys.exit(f"{argv} failed")
print(f"median {statistics.median(wall):.3f} s, max {max(wall):.3f} s, CPU median {statistics.median(cpu):.3f} s ({len(wall)} runs)")
PY
}

# array DIR: a 1,000-task array (its tasks, `true`, ended), each task's metrics file a copy of $tmp/one.jsonl.
array() {
  "$hl" submit --site local --nodes 1 --launcher srun --array 1000 --max-concurrent 16 --job-dir "$1" -- true >/dev/null 2>&1
  for i in $(seq 0 999); do cp "$tmp/one.jsonl" "$1/tasks/$i/metrics.jsonl"; done
  for _ in $(seq 1 120); do
    [ "$(cat "$1"/tasks/*/state.json 2>/dev/null | grep -c '"exited"')" = 1000 ] && return 0
    sleep 0.5
  done
  echo "run.sh: the tasks of $1 did not end" >&2
  exit 1
}

metrics "$tmp/one.jsonl" 400
for b in "${builds[@]}"; do
  name=${b%%=*} hl=${b#*=}
  echo "== uptime: $(uptime)"
  echo "== $name ($hl)"
  # Each build's own jobs, none removed until the end: on ext4 without a journal a new file's inode is looked for
  # past those removed in the last minute, so removing one build's files would slow the next one's.
  jobs=$tmp/$name
  "$hl" submit --site local --nodes 1 --launcher srun --job-dir "$jobs/big" -- true >/dev/null 2>&1
  metrics "$jobs/big/metrics.jsonl" 100000
  echo "metrics file: $(wc -l <"$jobs/big/metrics.jsonl") lines, $(du -h "$jobs/big/metrics.jsonl" | cut -f1)"
  timed "100,000 steps, page:" "$hl" report "$jobs/big"
  timed "100,000 steps, --json:" "$hl" report "$jobs/big" --json
  echo "page: $(du -h "$jobs/big/report.html" | cut -f1)"

  arrays=""
  for k in $(seq 1 "$repeats"); do array "$jobs/array$k"; arrays="$arrays $jobs/array$k"; done
  export arrays
  sync
  timed "1,000-task array, first report (no pages yet), its page and 1,000 task pages:" "$hl" report "{}"
  timed "1,000-task array, report again (over its pages):" "$hl" report "$jobs/array1"
  timed "1,000-task array, --json:" "$hl" report "$jobs/array1" --json
  echo "array page: $(du -h "$jobs/array1/report.html" | cut -f1), a task's page: $(du -h "$jobs/array1/tasks/0/report.html" | cut -f1)"
done
echo "== uptime: $(uptime)"
