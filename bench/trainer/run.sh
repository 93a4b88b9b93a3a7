#!/usr/bin/env bash
# Measures samples/s (and samples per CPU-second) of hpclaunch-train and of the Python DDP script (ddp_train.py)
# with 2 gloo ranks on this machine, same model, data, per-rank batch, optimizer and threads. The Python peer runs
# under PEER_PYTHON (default the peers' venv, /opt/hpclaunch/peers-venv/bin/python: torch 2.15's wheel with its own
# LibTorch and BLAS, made by scripts/peers-venv.sh); hpclaunch-train links Debian's LibTorch 1.13 unless
# HPCLAUNCH_TRAIN names a build against the wheel (t0513's build-wheel-gloo), so by default the two sides run
# different LibTorch builds. PEER_PYTHON=/usr/bin/python3 gives Debian's python3-torch 1.13: the same LibTorch
# underneath, the peer of the runs before 2026-11-27. Each JSON line names its torch version. Runs are interleaved (C++, Python, Python...) and repeated, and the median is reported, because
# the machine is shared. Usage: bench/trainer/run.sh [REPEATS] > results.jsonl  (a table goes to stderr)
# Env: HPCLAUNCH_TRAIN (default build-trainer/trainer/hpclaunch-train), THREADS (per rank, default 1),
#      PEER_PYTHON (above). BLAS: unset = the system's libblas.so.3 (OpenBLAS since scripts/install-deps.sh installs
#      libopenblas0-pthread); BLAS=reference: Debian's netlib reference BLAS through LD_LIBRARY_PATH (the old
#      default); BLAS=openblas: OpenBLAS unpacked privately (apt-get download + dpkg -x under
#      build-trainer/openblas, nothing installed), for a machine where it is not installed.
#      OPENBLAS_NUM_THREADS=THREADS for both implementations (hpclaunch-train also sets it itself). BLAS
#      picks the BLAS of Debian's LibTorch only; torch 2.15's wheel brings its own.
#      CONFIGS: space-separated subset of the config names below (default: all).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
train=${HPCLAUNCH_TRAIN:-$root/build-trainer/trainer/hpclaunch-train}
repeats=${1:-3}
threads=${THREADS:-1}
py=/usr/bin/python3
peer_py=${PEER_PYTHON:-/opt/hpclaunch/peers-venv/bin/python}
[ -x "$peer_py" ] || { echo "run.sh: PEER_PYTHON '$peer_py' is not there; run scripts/peers-venv.sh or set PEER_PYTHON" >&2; exit 2; }
peer_torch=$("$peer_py" -c 'import torch; print(torch.__version__)')
# hpclaunch-train's LibTorch, as its --version names it ("LibTorch 2.15.0" for a build against the peers' wheel:
# HPCLAUNCH_TRAIN=build-wheel-gloo/trainer/hpclaunch-train, t0513's build beside build/, gives the same LibTorch on both sides).
cpp_torch=libtorch-$("$train" --version | sed -n 's/.*(LibTorch \([^,)]*\).*/\1/p')
[ "$cpp_torch" != libtorch- ] || cpp_torch=libtorch-unknown
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ "${BLAS:-}" = openblas ]; then
  blas_dir=$root/build-trainer/openblas
  lib=$blas_dir/root/usr/lib/x86_64-linux-gnu/openblas-pthread
  if [ ! -f "$lib/libblas.so.3" ]; then
    mkdir -p "$blas_dir"
    (cd "$blas_dir" && apt-get download libopenblas0-pthread && dpkg -x libopenblas0-pthread_*.deb root)
  fi
  export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
elif [ "${BLAS:-}" = reference ]; then
  export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/blas:/usr/lib/x86_64-linux-gnu/lapack${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
export OPENBLAS_NUM_THREADS=$threads

source "$root/tests/integration/lib-port.sh"
# two_ranks CMD...: rank 0 and rank 1 on loopback; rank 0's stdout to $work/out.
two_ranks() {
  local port
  port=$(free_port)
  WORLD_SIZE=2 RANK=1 LOCAL_RANK=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$@" >"$work/out.1" 2>&1 &
  local other=$!
  WORLD_SIZE=2 RANK=0 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$@" >"$work/out" 2>"$work/err"
  wait "$other"
}
# hpclaunch-train's numbers from its metrics, after warm-up: samples/s (global batches over step wall times) and
# samples per CPU-second (global batches over rank 0's process CPU time x ranks).
cpp_rates() {
  "$py" - "$1" "$2" <<'PY'
import json, sys
steps = [json.loads(l) for l in open(sys.argv[1]) if '"type":"step"' in l][int(sys.argv[2]):]
samples = sum(s["samples_per_s"] * s["step_time_s"] for s in steps)
print(samples / sum(s["step_time_s"] for s in steps), samples / (2 * sum(s["cpu_s"] for s in steps)))
PY
}

# name | hpclaunch-train flags | ddp_train.py flags | steps | warm-up steps
# (autoencoder-block: hpclaunch-train blocking on every allreduce at once, as DDP does, instead of polling first)
all_configs=(
  "autoencoder|--model autoencoder --batch-size 128|--model autoencoder --batch-size 128|${AE_STEPS:-400}|40"
  "autoencoder-b64|--model autoencoder --batch-size 64|--model autoencoder --batch-size 64|${AE_STEPS:-400}|40"
  "autoencoder-block|--model autoencoder --batch-size 128 --spin-wait-us 0|--model autoencoder --batch-size 128|${AE_STEPS:-400}|40"
  "resnet18|--model resnet --resnet-depth 18 --batch-size 32|--model resnet --resnet-depth 18 --batch-size 32|60|10"
)
configs=()
for c in "${all_configs[@]}"; do
  [ -z "${CONFIGS:-}" ] || [[ " $CONFIGS " == *" ${c%%|*} "* ]] && configs+=("$c")
done
blas_name=${BLAS:-$(basename "$(dirname "$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3)")")}
printf '# blas=%s threads=%s repeats=%s hpclaunch-train: %s; peer: torch %s (%s) %s load=%s\n' "$blas_name" \
  "$threads" "$repeats" "$cpp_torch" "$peer_torch" "$peer_py" "$(date -u +%FT%TZ)" "$(cut -d' ' -f1-3 /proc/loadavg)" >&2
printf '%-12s %-22s %10s %10s\n' config impl samples/s per-cpu-s >&2
for config in "${configs[@]}"; do
  IFS='|' read -r name cpp_flags py_flags steps warm <<<"$config"
  for ((rep = 1; rep <= repeats; rep++)); do
    # shellcheck disable=SC2086
    two_ranks "$train" $cpp_flags --steps "$steps" --threads "$threads" --no-validation --log-every 100000 \
      --metrics "$work/m.jsonl"
    read -r rate cpu_rate < <(cpp_rates "$work/m.jsonl" "$warm")
    rm -f "$work/m.jsonl"
    echo "{\"config\":\"$name\",\"blas\":\"$blas_name\",\"impl\":\"hpclaunch-train\",\"torch\":\"$cpp_torch\",\"rep\":$rep,\"samples_per_s\":$rate,\"samples_per_cpu_s\":$cpu_rate}"
    printf '%-12s %-22s %10.1f %10.1f\n' "$name" hpclaunch-train "$rate" "$cpu_rate" >&2
    for loader in dataloader index; do
      # shellcheck disable=SC2086
      two_ranks "$peer_py" "$here/ddp_train.py" $py_flags --steps "$steps" --warmup-steps "$warm" --threads "$threads" \
        --loader "$loader"
      read -r rate cpu_rate < <("$py" -c 'import json,sys; r = json.load(open(sys.argv[1])); print(r["samples_per_s"], r["samples_per_cpu_s"])' "$work/out")
      echo "{\"config\":\"$name\",\"blas\":\"$blas_name\",\"impl\":\"python-ddp-$loader\",\"torch\":\"$peer_torch\",\"rep\":$rep,\"samples_per_s\":$rate,\"samples_per_cpu_s\":$cpu_rate}"
      printf '%-12s %-22s %10.1f %10.1f\n' "$name" "python-ddp-$loader" "$rate" "$cpu_rate" >&2
    done
  done
done
printf '# load after: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)" >&2
