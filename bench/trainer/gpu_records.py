#!/usr/bin/env python3
"""The records of bench/trainer/gpu.sh: one JSON line and one table line for each run, written the moment the run
ends (so that a run killed later, or a call that runs out of time, still brings back what was measured), the
graphs-against-eager loss check, and the summary table. Standard library only: it runs under any python3, not the
torch being measured.

  gpu_records.py add OUT PHASE CONFIG VARIANT STATUS SECONDS [--metrics FILE --warm N | --py-output FILE]
                     [--note TEXT]
  gpu_records.py check OUT CONFIG LAST_N TOLERANCE EAGER_METRICS GRAPHS_METRICS
                                                         exit 0 when graphs' mean loss over the last N steps is
                                                         within TOLERANCE (relative) of eager's, 1 when not or absent
  gpu_records.py summary OUT                            the table of every config: samples/s and the ratios

OUT holds results.jsonl and results.md (appended): a lent machine brings back few files, so nothing else.
Variants: eager and graphs are hpclaunch-train; python (indexed batches), workers (DataLoader with worker
processes, pinned) and ceiling (the batch already on the GPU) are bench/trainer/ddp_train.py.
"""
import json
import os
import sys

TRAIN_VARIANTS = ("eager", "graphs", "resident")  # resident: HPCLAUNCH_TRAIN_RESIDENT_BATCH=1, no input cost
PY_VARIANTS = ("python", "workers", "ceiling")


def step_records(path):
    with open(path) as f:
        return [r for r in (json.loads(line) for line in f if line.strip()) if r.get("type") == "step"]


def train_figures(path, warm):
    """After the warm-up: samples/s (global batches over the sum of step wall times, as ddp_train.py measures) and
    the share of that time spent waiting for batches (data_wait_s; 0 in older files)."""
    steps = step_records(path)[warm:]
    if not steps:
        raise ValueError(f"{path}: no step records after the {warm} warm-up steps")
    seconds = sum(s["step_time_s"] for s in steps)
    rate = sum(s["samples_per_s"] * s["step_time_s"] for s in steps) / seconds
    return rate, sum(s.get("data_wait_s") or 0.0 for s in steps) / seconds


def mean_last_loss(path, last):
    steps = step_records(path)
    if len(steps) < last:
        raise ValueError(f"{path}: {len(steps)} step records, fewer than the {last} to average")
    losses = [s["loss"] for s in steps[-last:]]
    if any(x is None for x in losses):
        raise ValueError(f"{path}: a non-finite loss among the last {last} steps")
    return sum(losses) / last, len(steps)


def py_rate(path):
    """ddp_train.py's result: its last line that is a JSON object with samples_per_s."""
    with open(path) as f:
        for line in reversed(f.read().splitlines()):
            if line.startswith("{"):
                return float(json.loads(line)["samples_per_s"])
    raise ValueError(f"{path}: no result line")


def read_records(out):
    path = os.path.join(out, "results.jsonl")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def rate_of(records, config, variant):
    """The median of the config's and variant's figures (one per repeat), None when there is none."""
    rates = sorted(r["samples_per_s"] for r in records
                   if r["config"] == config and r["variant"] == variant and r["status"] == "ok" and "samples_per_s" in r)
    if not rates:
        return None
    mid = len(rates) // 2
    return rates[mid] if len(rates) % 2 else (rates[mid - 1] + rates[mid]) / 2


def append(out, record, line):
    with open(os.path.join(out, "results.jsonl"), "a") as f:
        f.write(json.dumps(record) + "\n")
    md = os.path.join(out, "results.md")
    new = not os.path.exists(md)
    with open(md, "a") as f:
        if new:
            f.write("| phase | config | variant | status | seconds | samples/s | / ceiling | / DataLoader | note |\n")
            f.write("|---|---|---|---|---|---|---|---|---|\n")
        f.write(line + "\n")
    print(line, flush=True)


def fmt(x, spec):
    return "" if x is None else format(x, spec)


def add(argv):
    out, phase, config, variant, status, seconds = argv[:6]
    opts = dict(zip(argv[6::2], argv[7::2]))
    record = {"phase": phase, "config": config, "variant": variant, "status": status, "seconds": float(seconds)}
    note = opts.get("--note", "")
    if status == "ok":
        try:
            if "--metrics" in opts:
                record["samples_per_s"], record["data_wait_share"] = train_figures(opts["--metrics"],
                                                                                 int(opts.get("--warm", "0")))
                wait = f"waiting for batches {100 * record['data_wait_share']:.1f}% of the step time"
                note = f"{note}; {wait}" if note else wait
            elif "--py-output" in opts:
                record["samples_per_s"] = py_rate(opts["--py-output"])
        except (OSError, ValueError, KeyError) as e:
            record["status"] = "failed"
            note = f"no figure: {e}"
    records = read_records(out)
    rate = record.get("samples_per_s")
    ceiling = rate_of(records, config, "ceiling")
    workers = rate_of(records, config, "workers")
    if rate is not None and variant in TRAIN_VARIANTS:
        if ceiling:
            record["vs_ceiling"] = rate / ceiling
        if workers:
            record["vs_dataloader"] = rate / workers
    if note:
        record["note"] = note
    line = (f"| {phase} | {config} | {variant} | {record['status']} | {record['seconds']:.0f} | {fmt(rate, '.1f')} "
            f"| {fmt(record.get('vs_ceiling'), '.2f')} | {fmt(record.get('vs_dataloader'), '.2f')} | {note} |")
    append(out, record, line)


def check(argv):
    out, config, last, tolerance = argv[0], argv[1], int(argv[2]), float(argv[3])
    means = {}
    try:
        for variant, path in zip(("eager", "graphs"), argv[4:6]):
            means[variant] = mean_last_loss(path, last)
        eager, graphs = means["eager"][0], means["graphs"][0]
        ok = abs(graphs - eager) <= tolerance * abs(eager)
        note = (f"mean loss of the last {last} of {means['eager'][1]} steps: eager {eager:.5f}, graphs {graphs:.5f}, "
                f"{abs(graphs - eager) / abs(eager):.4f} apart (tolerance {tolerance})")
    except (OSError, ValueError, KeyError, ZeroDivisionError) as e:
        ok, note = False, f"not comparable: {e}"
    record = {"phase": "check", "config": config, "variant": "graphs-vs-eager", "status": "ok" if ok else "failed",
              "seconds": 0.0, "note": note}
    append(out, record, f"| check | {config} | graphs-vs-eager | {record['status']} | | | | | {note} |")
    return 0 if ok else 1


def summary(argv):
    out = argv[0]
    records = read_records(out)
    configs = []
    for r in records:
        if r["config"] not in configs and r["variant"] in TRAIN_VARIANTS + PY_VARIANTS:
            configs.append(r["config"])
    print("| config | Python reference | Python DataLoader | Python ceiling | hpclaunch-train | / ceiling "
          "| / DataLoader | --cuda-graphs | / ceiling | / DataLoader | resident batch | / ceiling | / DataLoader |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for c in configs:
        rates = {v: rate_of(records, c, v) for v in TRAIN_VARIANTS + PY_VARIANTS}
        cells = [fmt(rates[v], ".1f") or "-" for v in PY_VARIANTS]
        for v in TRAIN_VARIANTS:
            r = rates[v]
            cells.append(fmt(r, ".1f") or "-")
            cells.append(fmt(r / rates["ceiling"], ".2f") + "x" if r and rates["ceiling"] else "-")
            cells.append(fmt(r / rates["workers"], ".2f") + "x" if r and rates["workers"] else "-")
        print(f"| {c} | " + " | ".join(cells) + " |")
    missing = [r for r in records if r["status"] != "ok"]
    for r in missing:
        print(f"- {r['phase']} {r['config']} {r['variant']}: {r['status']}" + (f" ({r['note']})" if r.get("note") else ""))
    return 0


def main():
    commands = {"add": add, "check": check, "summary": summary}
    if len(sys.argv) < 3 or sys.argv[1] not in commands:
        sys.exit(f"usage: {sys.argv[0]} add|check|summary OUT ...")
    sys.exit(commands[sys.argv[1]](sys.argv[2:]) or 0)


if __name__ == "__main__":
    main()
