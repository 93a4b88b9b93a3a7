#!/usr/bin/env bash
# bench/report/run.sh [REPEATS]: how long `hpclaunch report` takes on the two large cases issue 54 names: a job whose
# metrics file holds 100,000 steps (and 1,000 validations), and an array of 1,000 tasks (each with a 400-step metrics
# file; the array's page and its 1,000 task pages). Both are local-site jobs made here; the timings are the median
# of REPEATS runs (default 5) of the whole command, wall clock, and its maximum. Results: bench/report/RESULTS.md.
set -euo pipefail
repeats=${1:-5}
root=$(cd "$(dirname "$0")/../.." && pwd)
hl=${HPCLAUNCH:-$root/build/launcher/hpclaunch}
[ -x "$hl" ] || { echo "run.sh: no hpclaunch at $hl (build first, or set HPCLAUNCH)" >&2; exit 2; }
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

# timed LABEL CMD...: the median and the maximum of `repeats` runs, in seconds.
timed() {
  local label=$1
  shift
  python3 - "$repeats" "$@" <<'PY' | sed "s/^/$label /"
import statistics, subprocess, sys, time
n, cmd = int(sys.argv[1]), sys.argv[2:]
runs = []
for _ in range(n):
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    runs.append(time.perf_counter() - t)
print(f"median {statistics.median(runs):.3f} s, max {max(runs):.3f} s ({n} runs)")
PY
}

"$hl" submit --site local --nodes 1 --launcher srun --job-dir "$tmp/big" -- true >/dev/null 2>&1
metrics "$tmp/big/metrics.jsonl" 100000
echo "metrics file: $(wc -l <"$tmp/big/metrics.jsonl") lines, $(du -h "$tmp/big/metrics.jsonl" | cut -f1)"
timed "100,000 steps, page:" "$hl" report "$tmp/big"
timed "100,000 steps, --json:" "$hl" report "$tmp/big" --json
echo "page: $(du -h "$tmp/big/report.html" | cut -f1)"

"$hl" submit --site local --nodes 1 --launcher srun --array 1000 --max-concurrent 16 --job-dir "$tmp/array" -- true >/dev/null 2>&1
metrics "$tmp/one.jsonl" 400
for i in $(seq 0 999); do cp "$tmp/one.jsonl" "$tmp/array/tasks/$i/metrics.jsonl"; done
timed "1,000-task array, its page and 1,000 task pages:" "$hl" report "$tmp/array"
timed "1,000-task array, --json:" "$hl" report "$tmp/array" --json
echo "array page: $(du -h "$tmp/array/report.html" | cut -f1)"
