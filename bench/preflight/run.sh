#!/usr/bin/env bash
# The preflight's allreduce sweep (hpclaunch-probe, gloo) beside a Python torch.distributed.all_reduce loop of the
# same sizes (allreduce.py, Debian's python3-torch: the same gloo underneath), 2 ranks on this machine, interleaved
# and repeated; prints per size the median busbw of each and the ratio probe/python, as a Markdown table.
# Usage: bench/preflight/run.sh [REPEATS] [MAX_BYTES]   Env: HPCLAUNCH_PROBE (default build/trainer/hpclaunch-probe)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
probe=${HPCLAUNCH_PROBE:-$root/build/trainer/hpclaunch-probe}
repeats=${1:-3}
max=${2:-67108864}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$root/tests/integration/lib-port.sh"
two_ranks() {  # OUT CMD...: runs CMD as ranks 0 and 1; rank 0's stdout to OUT
  local out=$1 port
  shift
  port=$(free_port)
  MASTER_ADDR=127.0.0.1 MASTER_PORT=$port WORLD_SIZE=2 RANK=1 LOCAL_RANK=1 "$@" >/dev/null 2>&1 &
  MASTER_ADDR=127.0.0.1 MASTER_PORT=$port WORLD_SIZE=2 RANK=0 LOCAL_RANK=0 "$@" >"$out" 2>/dev/null
  wait
}
for i in $(seq 1 "$repeats"); do
  two_ranks "$work/probe-$i.txt" "$probe" --min-bytes 8 --max-bytes "$max" --json "$work/probe-$i.json" || true
  two_ranks "$work/python-$i.jsonl" /usr/bin/python3 "$here/allreduce.py" 8 "$max"
done
/usr/bin/python3 - "$work" "$repeats" <<'PY'
import json, statistics, sys
work, repeats = sys.argv[1], int(sys.argv[2])
probe, python = {}, {}
for i in range(1, repeats + 1):
    for row in json.load(open(f"{work}/probe-{i}.json"))["allreduce"]:
        probe.setdefault(row["bytes"], []).append(row["busbw_gbs"])
    for line in open(f"{work}/python-{i}.jsonl"):
        row = json.loads(line)
        python.setdefault(row["bytes"], []).append(row["bytes"] / row["seconds"] / 1e9)  # 2 ranks: busbw = algbw
print("| size (B) | hpclaunch-probe busbw (GB/s) | Python all_reduce busbw (GB/s) | ratio |")
print("|---:|---:|---:|---:|")
for b in sorted(probe):
    p, q = statistics.median(probe[b]), statistics.median(python.get(b, [0]))
    print(f"| {b} | {p:.4f} | {q:.4f} | {p / q if q else float('nan'):.2f} |")
PY
