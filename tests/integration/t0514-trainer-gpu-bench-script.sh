#!/usr/bin/env bash
# t0514: bench/trainer/gpu.sh and gpu-machine.sh without a GPU. A lent GPU machine is there for minutes, so the
# script must bring back whatever it measured; its logic is checked here with stand-ins for what needs a GPU (a
# fake hpclaunch-train and a fake python that answer as the real ones do on a GPU, or fail, or hang: the fakes are
# the only way to run the GPU paths here), and its records are checked against the real trainer's metrics on the
# CPU:
# - the scripts parse and pass shellcheck; --dry-run prints the build against torch's prefix, then the runs in the
#   order that matters (eager against the ceiling, the DataLoader, the checks, the graph variants, the U-Net);
# - without a GPU a real run stops at once with one line (exit 1);
# - with the stand-ins: a failed run and a hung run are recorded (failed, timeout) and the rest go on; each run's
#   record is in results.jsonl and results.md the moment it ends (a run killed from outside keeps them); the
#   graphs check compares the mean loss of the last 50 steps, and when it fails the graph variants are skipped
#   and said so; a budget skips what would not fit, and says so;
# - gpu_records.py reads the real hpclaunch-train's metrics (a CPU run): a rate, and two runs of the same seed
#   pass the graphs check while a different seed's does not.
# The Python reference's 3D U-Net and the DataLoader and resident loaders train a few CPU steps under torch 2.15.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-trainer.sh"
src=$HPCLAUNCH_SOURCE_DIR
gpu=$src/bench/trainer/gpu.sh
records=$src/bench/trainer/gpu_records.py
work=$test_tmp
for f in "$gpu" "$src/bench/trainer/gpu-machine.sh" "$src/bench/trainer/gather/run.sh"; do
  bash -n "$f" || fail "$(basename "$f") does not parse"
  if command -v shellcheck >/dev/null; then shellcheck -x -P "$src" "$f" || fail "shellcheck $(basename "$f")"; fi
done

# The dry run: the build, and every run in order.
PATH=/usr/bin:/bin "$gpu" --dry-run 1 >"$work/dry" || fail "dry run failed"
grep -q "^+ cmake -S $src -B .* -DCMAKE_PREFIX_PATH=\$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')" "$work/dry" ||
  fail "no cmake against torch's prefix: $(cat "$work/dry")"
count() { grep -c -- "$1" "$work/dry" || true; }
for model in "--resnet-depth 50 --batch-size 256" "--resnet-depth 18 --batch-size 256" "--resnet-depth 18 --batch-size 32" \
             "--model unet3d" "--model autoencoder"; do
  runs=2 resident=0
  [[ $model != *"batch-size 256" ]] || runs=3 resident=1  # eager, --cuda-graphs and the resident batch
  assert_eq "$runs" "$(count "hpclaunch-train .*$model.* --device cuda .*--metrics")" "hpclaunch-train runs of $model"
  assert_eq "$resident" "$(count "^+ env HPCLAUNCH_TRAIN_RESIDENT_BATCH=1 .*hpclaunch-train .*$model.* --device cuda .*--metrics")" \
    "resident-batch runs of $model"
  assert_eq 1 "$(count "hpclaunch-train .*$model.*--cuda-graphs")" "--cuda-graphs runs of $model"
  assert_eq 1 "$(count "ddp_train.py .*$model.* --device cuda --backend nccl .*--loader resident\$")" "ceiling runs of $model"
done
for model in "--resnet-depth 50 --batch-size 256" "--resnet-depth 18 --batch-size 256"; do
  for loader in index "workers --num-workers 8"; do
    assert_eq 1 "$(count "ddp_train.py .*$model.* --loader $loader\$")" "Python --loader $loader runs of $model"
  done
done
grep -- '--model resnet' "$work/dry" | grep -v -q -- '--amp --channels-last' && fail "a ResNet run without bf16/channels-last"
line_of() { grep -n -m1 -- "$1" "$work/dry" | cut -d: -f1; }
order=("resnet-depth 50 --batch-size 256 .*--loader resident" "RESIDENT_BATCH=1 .*resnet-depth 50 --batch-size 256"
  "hpclaunch-train .*resnet-depth 18 --batch-size 256 .*--metrics"
  "--loader workers" "--check-batches" "hpclaunch-train .*--model autoencoder" "resnet-depth 18 --batch-size 256 --cuda-graphs"
  "--model unet3d")
prev=0
for pattern in "${order[@]}"; do
  n=$(line_of "$pattern")
  { [ -n "$n" ] && [ "$n" -gt "$prev" ]; } || fail "dry run: '$pattern' is not after the runs before it: $(cat "$work/dry")"
  prev=$n
done

# No GPU: one line, exit 1, nothing measured (Debian's torch 1.13 is a CPU build).
rc=0
PATH=/usr/bin:/bin "$gpu" --out "$work/none" 1 >"$work/out" 2>"$work/err" || rc=$?
assert_eq 1 "$rc" "gpu.sh's exit without a GPU"
assert_eq "gpu.sh: no GPU here (python3's torch sees no CUDA device): nothing measured; run it on a GPU node (--dry-run prints the commands)" \
  "$(cat "$work/err")" "the no-GPU line"
[ ! -e "$work/none" ] || fail "gpu.sh without a GPU wrote $work/none"

# The stand-ins. The trainer writes the real trainer's step records: samples/s 900 eager (a tenth of each step
# waiting for its batch), 1200 with graphs, 1000 on the resident batch; the loss falls with the step (graphs' is
# off by STANDIN_GRAPHS_LOSS_OFF, relative); graphs on ResNet-50 hangs.
cat >"$work/train" <<'EOF'
#!/usr/bin/env bash
[ "$1" = --version ] && { echo "hpclaunch-train stand-in"; exit 0; }
args=" $* " metrics= steps=10 graphs=0
while [ $# -gt 0 ]; do
  case $1 in --metrics) metrics=$2; shift ;; --steps) steps=$2; shift ;; --cuda-graphs) graphs=1 ;; esac
  shift
done
case $args in *" --check-batches "*) echo "check-batches: 40 batches agree"; exit 0 ;; esac
if [ "$graphs" = 1 ] && [[ $args == *"--resnet-depth 50 "* ]]; then echo "stand-in: hanging"; sleep 600; fi
rate=900 off=0 wait=0.01
[ "$graphs" = 0 ] || { rate=1200; off=${STANDIN_GRAPHS_LOSS_OFF:-0}; }
[ "${HPCLAUNCH_TRAIN_RESIDENT_BATCH:-0}" = 0 ] || { rate=1000; wait=0; }
awk -v n="$steps" -v o="$off" -v r="$rate" -v w="$wait" 'BEGIN { for (i = 1; i <= n; i++)
  printf "{\"type\":\"step\",\"epoch\":0,\"step\":%d,\"loss\":%.6f,\"lr\":0.001,\"samples_per_s\":%d,\"step_time_s\":0.1,\"data_wait_s\":%s}\n",
    i, (1 + 10 / i) * (1 + o), r, w }' >>"$metrics"
echo "stand-in trained $steps steps"
EOF
cat >"$work/python" <<'EOF'
#!/usr/bin/env bash
case $1 in
  */gpu_facts.py) echo '{"cuda": true, "gpu": "Stand-in GPU", "torch": "2.15.0", "cuda_version": "13.2", "nccl": "2.30.7"}' ;;
  */ddp_train.py)
    case " $* " in *" --model unet3d "*) echo "stand-in: unet3d fails"; exit 1 ;; esac
    case " $* " in
      *" --loader resident "*) r=1000 ;;
      *" --loader workers "*) r=600 ;;
      *) r=450 ;;
    esac
    echo "{\"impl\": \"python-ddp\", \"samples_per_s\": $r}" ;;
  *) exit 2 ;;
esac
EOF
chmod +x "$work/train" "$work/python"
standin() {  # OUT [GPU_SH_ARG...]
  local o=$1
  shift
  TRAIN=$work/train PYTHON=$work/python RUN_LIMIT=${RUN_LIMIT:-3} timeout 300 "$gpu" --out "$o" "$@" >"$o.log" 2>&1
}
record() {  # OUT CONFIG VARIANT FIELD: the field of the last record of CONFIG and VARIANT
  python3 -c '
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1] + "/results.jsonl")]
r = [r for r in rs if r["config"] == sys.argv[2] and r["variant"] == sys.argv[3]]
v = r[-1].get(sys.argv[4], "") if r else "(no record)"
print(round(v, 2) if isinstance(v, float) else v)' "$@"
}
rc=0
standin "$work/a" --results "$work/a-results.md" 1 || rc=$?
assert_eq 0 "$rc" "gpu.sh with the stand-ins: $(cat "$work/a.log")"
assert_eq ok "$(record "$work/a" resnet50 eager status)" "ResNet-50 eager"
assert_eq 900.0 "$(record "$work/a" resnet50 eager samples_per_s)" "ResNet-50 eager samples/s (warm-up left out)"
assert_eq 0.9 "$(record "$work/a" resnet50 eager vs_ceiling)" "ResNet-50 eager over the ceiling (measured before it)"
assert_eq 0.1 "$(record "$work/a" resnet50 eager data_wait_share)" "ResNet-50 eager's share of time waiting for batches"
assert_contains "$(record "$work/a" resnet50 eager note)" "waiting for batches 10.0% of the step time" "the eager record's note"
assert_eq 1000.0 "$(record "$work/a" resnet50 resident samples_per_s)" "ResNet-50 on the resident batch"
assert_eq 1.0 "$(record "$work/a" resnet50 resident vs_ceiling)" "the resident batch over the ceiling"
assert_eq 600.0 "$(record "$work/a" resnet18 workers samples_per_s)" "the DataLoader's figure"
assert_eq ok "$(record "$work/a" resnet18 check-batches status)" "the batch check"
assert_eq ok "$(record "$work/a" autoencoder graphs-vs-eager status)" "the graphs check"
assert_contains "$(record "$work/a" autoencoder graphs-vs-eager note)" "mean loss of the last 50 of 1000 steps" "the check's note"
assert_eq 1200.0 "$(record "$work/a" resnet18 graphs samples_per_s)" "a graph variant after the check"
assert_eq timeout "$(record "$work/a" resnet50 graphs status)" "the hung ResNet-50 graphs run"
assert_eq failed "$(record "$work/a" unet3d ceiling status)" "the failed U-Net Python run"
assert_eq "exit 1: stand-in: unet3d fails" "$(record "$work/a" unet3d ceiling note)" "the failed run's note"
assert_eq ok "$(record "$work/a" unet3d eager status)" "the run after a failed one"
grep -q '^===== graphs resnet50 graphs (limit 3 s): .*--cuda-graphs' "$work/a/runs.log" || fail "no header for the hung run in runs.log"
grep -q '^stand-in: unet3d fails$' "$work/a/runs.log" || fail "the failed run's output is not in runs.log"
n=$(wc -l <"$work/a/results.jsonl")
assert_eq "$n" "$(($(wc -l <"$work/a/results.md") - 2))" "a table line for each JSON record"
grep -q '^| resnet50 | 450.0 | 600.0 | 1000.0 | 900.0 | 0.90x | 1.50x | - | - | - | 1000.0 | 1.00x | 1.67x |$' "$work/a.log" ||
  fail "the summary's ResNet-50 row: $(cat "$work/a.log")"
grep -q '^## GPU: Stand-in GPU, driver .*; torch 2.15.0 CUDA 13.2 NCCL 2.30.7; hpclaunch-train stand-in' "$work/a-results.md" ||
  fail "no results section naming the GPU and versions: $(cat "$work/a-results.md")"
assert_eq "" "$(find "$work/a" -mindepth 1 ! -name results.jsonl ! -name results.md ! -name runs.log)" "files in OUT besides the three"

# The graphs check fails (graphs' loss 50% off): the graph variants are skipped, and said so.
STANDIN_GRAPHS_LOSS_OFF=0.5 standin "$work/b" 1 || fail "gpu.sh, graphs check failing: $(cat "$work/b.log")"
assert_eq failed "$(record "$work/b" autoencoder graphs-vs-eager status)" "the graphs check, 50% apart"
assert_eq skipped "$(record "$work/b" all graph-variants status)" "the graph variants after a failed check"
assert_eq "(no record)" "$(record "$work/b" resnet18 graphs status)" "a graph variant run after a failed check"
assert_eq "the graphs-against-eager check did not pass" "$(record "$work/b" all graph-variants note)" "the skip's reason"
# No config with a graphs check wanted: the graph variants are skipped, and the reason is not a failed check.
CONFIGS="resnet50 resnet18" standin "$work/b2" 1 || fail "gpu.sh, ResNets only: $(cat "$work/b2.log")"
assert_eq "no graphs-against-eager check ran (CONFIGS has neither autoencoder nor resnet18-b32)" \
  "$(record "$work/b2" all graph-variants note)" "the skip's reason with no check run"

# The budget: 29 s fits the trainer's runs (estimates 10-20 s; the stand-ins take none) but not Python's (25-30 s).
standin "$work/c" --budget 29 1 || fail "gpu.sh --budget 25: $(cat "$work/c.log")"
assert_eq ok "$(record "$work/c" resnet50 eager status)" "a run that fits the budget"
assert_eq skipped "$(record "$work/c" resnet50 ceiling status)" "a run that does not fit"
assert_contains "$(record "$work/c" resnet50 ceiling note)" "budget: about 30 s needed, " "the skip's note"

# Killed from outside while a run hangs (a call out of time): what was measured before is there.
RUN_LIMIT=120 TRAIN=$work/train PYTHON=$work/python setsid "$gpu" --out "$work/d" 1 >"$work/d.log" 2>&1 &
pid=$!
wait_until --on-timeout 'kill -KILL -- "-$pid"' 120 "gpu.sh to reach the hanging run" \
  'grep -q "graphs resnet50 graphs" "$work/d/runs.log"'
kill -KILL -- "-$pid"
wait "$pid" 2>/dev/null || true
assert_eq ok "$(record "$work/d" resnet18 graphs status)" "a record written before the kill"
assert_eq "(no record)" "$(record "$work/d" unet3d eager status)" "a run after the kill"

# gpu_records.py on the real trainer's metrics (CPU, auto-encoder): a rate; the same seed twice passes the graphs
# check, another seed does not.
for run in s1 s1b s2; do
  seed=1
  [ "$run" != s2 ] || seed=2
  WORLD_SIZE=1 RANK=0 timeout 120 "$HPCLAUNCH_TRAIN" --model autoencoder --synthetic --synthetic-samples 4096 \
    --batch-size 64 --steps 80 --epochs 100 --seed "$seed" --threads 1 --no-validation --metrics "$work/$run.jsonl" \
    >"$work/$run.out" 2>&1 || fail "hpclaunch-train seed $seed: $(tail -3 "$work/$run.out")"
done
mkdir -p "$work/e"
python3 "$records" add "$work/e" eager autoencoder eager ok 1 --metrics "$work/s1.jsonl" --warm 10 >/dev/null
rate=$(record "$work/e" autoencoder eager samples_per_s)
awk -v r="$rate" 'BEGIN { exit !(r > 0) }' || fail "no rate from the real trainer's metrics: '$rate'"
python3 "$records" check "$work/e" autoencoder 50 0.02 "$work/s1.jsonl" "$work/s1b.jsonl" >/dev/null ||
  fail "the same seed twice failed the check: $(record "$work/e" autoencoder graphs-vs-eager note)"
rc=0
python3 "$records" check "$work/e" autoencoder 50 0.0001 "$work/s1.jsonl" "$work/s2.jsonl" >/dev/null || rc=$?
assert_eq 1 "$rc" "the check on two seeds at a tolerance of 1e-4"

# The Python reference's new loaders and the U-Net, a few CPU steps under torch 2.15.
py=$(peer_python)
WORLD_SIZE=1 RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=$(free_port) timeout 120 "$py" \
  "$src/bench/trainer/ddp_train.py" --model unet3d --unet-width 2 --crop 16 --synthetic --synthetic-samples 8 \
  --batch-size 1 --steps 3 --warmup-steps 1 --loader index --amp --channels-last >"$work/py" 2>&1 ||
  fail "ddp_train.py unet3d: $(tail -3 "$work/py")"
grep -q '"model": "unet3d"' "$work/py" || fail "no result line: $(cat "$work/py")"
for loader in "workers --num-workers 2" resident; do
  # shellcheck disable=SC2086
  WORLD_SIZE=1 RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=$(free_port) timeout 120 "$py" \
    "$src/bench/trainer/ddp_train.py" --model autoencoder --synthetic --synthetic-samples 1024 --batch-size 64 \
    --steps 6 --warmup-steps 2 --loader $loader >"$work/py" 2>&1 || fail "ddp_train.py --loader $loader: $(tail -3 "$work/py")"
  grep -q "\"loader\": \"${loader%% *}\"" "$work/py" || fail "no result line for --loader $loader: $(cat "$work/py")"
done
echo PASS
