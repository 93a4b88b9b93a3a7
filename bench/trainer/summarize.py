#!/usr/bin/python3
"""Medians and ratios from run.sh's JSON lines: python3 summarize.py results.jsonl -> Markdown tables of
samples/s (wall) and, where recorded, samples per CPU-second."""
import json
import statistics
import sys
from collections import defaultdict

IMPLS = ["hpclaunch-train", "python-ddp-dataloader", "python-ddp-index"]


def table(runs, key, title):
    configs = sorted({c for c, _ in runs})
    print(f"{title}\n")
    print("| config | hpclaunch-train (min-max) | Python DDP, DataLoader | Python DDP, indexing "
          "| C++ / DataLoader | C++ / indexing | runs |")
    print("|---|---|---|---|---|---|---|")
    for c in configs:
        vals = {i: [r[key] for r in runs[(c, i)] if key in r] for i in IMPLS}
        if not all(vals.values()):
            continue
        med = {i: statistics.median(v) for i, v in vals.items()}
        cxx, dl, ix = med[IMPLS[0]], med[IMPLS[1]], med[IMPLS[2]]
        print(f"| {c} | {cxx:.1f} ({min(vals[IMPLS[0]]):.0f}-{max(vals[IMPLS[0]]):.0f}) | {dl:.1f} | {ix:.1f} "
              f"| {cxx / dl:.2f}x | {cxx / ix:.2f}x | {len(vals[IMPLS[0]])} each |")
    print()


runs = defaultdict(list)
for line in open(sys.argv[1]):
    if line.strip():
        r = json.loads(line)
        runs[(r["config"], r["impl"])].append(r)
table(runs, "samples_per_s", "Samples/s (wall clock, median of interleaved runs):")
if any("samples_per_cpu_s" in r for v in runs.values() for r in v):
    table(runs, "samples_per_cpu_s", "Samples per CPU-second (process CPU time of rank 0 x 2):")
