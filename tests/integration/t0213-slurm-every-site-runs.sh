#!/usr/bin/env bash
# Every rendered Slurm script runs, as t0212 does for PBS: for every built-in Slurm site in service and every
# launcher it allows, `hpclaunch submit` sends the site's script to the real two-node test cluster, and every
# worker prints its rank, the world size and MASTER_ADDR. The golden files check the text; this checks that the
# text works. A retired site (submit refuses it) is rendered only.
# The test cluster is not the site, and only what it lacks is changed, in a profile that extends the site's
# (as tests/integration/sites/test-perlmutter.yaml does): the nodes' shape (64 cores, 4 GPUs of type a100, x86_64),
# the GPU request's type and a node feature it does not have (gpu instead), the partition where the site's is not
# one of the cluster's (another of the site's own that is, else the cluster's debug), a GPU request where the site
# gives whole nodes with their GPUs and binds them with srun --gpus-per-task, and JUWELS's InfiniBand host-name
# suffix (no n1i here). Everything else is the site's: directives, srun and mpirun lines, environment, requeue, memory, account.
# No Lmod or conda here: `module` and `conda` do nothing. Each job asks 2 of the 4 GPUs a node has (Trillium, which
# takes 1 or 4: 1), so that jobs run two at once; all are submitted first and waited for together.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
need_cluster
need_cmd python3

mkdir -p "$test_tmp/bin" "$test_tmp/sites" "$test_tmp/jobs"
for stub in module conda; do printf '#!/bin/sh\nexit 0\n' >"$test_tmp/bin/$stub"; done
chmod +x "$test_tmp/bin/"*
# sbatch passes the submitting environment on: the stubs, and what Open MPI needs as root beside srun's steps.
export PATH=$test_tmp/bin:$PATH OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
  OMPI_MCA_plm_slurm_args=--overlap

# One line per case: SITE STATUS LAUNCHER GPUS ACCOUNT PARTITION ("-": none to give), and a profile test-SITE.yaml
# beside each active site, from `sites --json` and `sites show NAME --json`.
partitions=$(sinfo -h -o %R | sort -u | xargs)
"$HPCLAUNCH" sites --json | python3 -c '
import json, subprocess, sys
hpclaunch, sites_dir, partitions = sys.argv[1], sys.argv[2], sys.argv[3].split()
features = {"gpu", "a100", "nvme"}  # the test nodes: scripts/test-cluster.sh
for site in json.load(sys.stdin)["sites"]:
    if site["scheduler"] != "slurm":
        continue
    p = json.loads(subprocess.run([hpclaunch, "sites", "show", site["name"], "--json"], check=True,
                                  capture_output=True, text=True).stdout)["profile"]
    account = (p.get("account") or {}).get("example") or "-"
    queues = [q["name"] for q in p.get("queues", []) if q.get("kind", "partition") == "partition"]
    partition = "-"  # a retired site is rendered as it is
    if site["status"] == "active":
        derived_queues = None
        if queues and not set(queues) & set(partitions):  # no partition of the site is here: the cluster debug
            derived_queues = [{"name": "debug", "kind": "partition", "default": True}]
            partition = "debug"
        elif queues and queues[0] not in partitions:  # the default and the planned may differ: give one that exists
            partition = next(q for q in queues if q in partitions)
        gpu = dict(p.get("gpu_request") or {})
        rank_options = (p.get("slurm") or {}).get("rank_options") or []
        # The GPUs of a whole node come with it on the site (Frontier, Alps); here a job has only the GPUs it asks for,
        # and srun --gpus-per-task needs some.
        if gpu.get("style", "none") == "none" and any(o.startswith("--gpus-per-task") for o in rank_options):
            gpu["style"] = "gpus-per-node"
        if gpu.get("type"):
            gpu["type"] = "a100"
        if gpu.get("constraint") and not set(gpu["constraint"].replace("&", " ").split()) <= features:
            gpu["constraint"] = "gpu"
        derived = {"name": "test-" + p["name"], "extends": p["name"], "gpu_request": gpu,
                   "node": {"gpus": 4, "gpu_model": "fake", "cores": 64, "threads_per_core": 1, "memory_gb": 250,
                            "arch": "x86_64"}}
        if derived_queues:
            derived["queues"] = derived_queues
        rdzv = p.get("rendezvous") or {}
        if rdzv.get("suffix"):
            derived["rendezvous"] = dict(rdzv, suffix="")
        with open(sites_dir + "/test-" + p["name"] + ".yaml", "w") as f:
            json.dump(derived, f)  # JSON is YAML
    counts = (p.get("gpu_request") or {}).get("gpus_per_node") or [2]
    gpus = 2 if 2 in counts else min(counts)  # Trillium: 1 or 4
    for launcher in p["launch"]["allowed"]:
        print(p["name"], site["status"], launcher, gpus, account, partition)
' "$HPCLAUNCH" "$test_tmp/sites" "$partitions" >"$test_tmp/cases" || fail "the cases could not be listed"
mapfile -t cases <"$test_tmp/cases"
[ "${#cases[@]}" -ge 20 ] || fail "fewer Slurm sites and launchers than built in: ${cases[*]}"

report='echo "worker $RANK $WORLD_SIZE $MASTER_ADDR"; echo "device $LOCAL_RANK ${ROCR_VISIBLE_DEVICES-unset} ${HIP_VISIBLE_DEVICES-unset}"'
ids=()
# The final state of every job scontrol still holds, by id; true once each job of ids has one. Asked after each
# submit too: a job that ended is forgotten MinJobAge (30 s) later, and submitting them all took 55 s on a loaded
# machine (t0213@24.11 waited for a job forgotten before its turn).
declare -A final=()
collect() {
  local jid st e
  while read -r jid st; do job_ended "$st" && final[$jid]=$st; done < <(scontrol show job -o 2>/dev/null |
    sed -nE 's/^JobId=([0-9]+) .*JobState=([A-Z_]+).*/\1 \2/p')
  for e in "${ids[@]}"; do [ -n "${final[${e%% *}]:-}" ] || return 1; done
}
for case in "${cases[@]}"; do
  read -r site status launcher gpus account partition <<<"$case"
  job=$test_tmp/jobs/$site-$launcher
  args=(--launcher "$launcher" --nodes 2 --gpus-per-node "$gpus" --time 10 --job-dir "$job")
  [ "$account" = - ] || args+=(--account "$account")
  [ "$partition" = - ] || args+=(--partition "$partition")
  if [ "$status" != active ]; then
    "$HPCLAUNCH" render --site "$site" "${args[@]}" -- sh -c "$report" >"$job.sh" 2>"$job.err" \
      || fail "render --site $site --launcher $launcher (retired): $(cat "$job.err")"
    assert_contains "$(cat "$job.sh")" '"$HPCLAUNCH" ' "$site --launcher $launcher (retired): the script's launch"
    continue
  fi
  id=$("$HPCLAUNCH" submit --site "test-$site" --site-file "$test_tmp/sites/test-$site.yaml" "${args[@]}" \
    -- sh -c "$report" 2>"$job.err") || fail "submit --site $site --launcher $launcher: $(cat "$job.err")"
  [[ $id =~ ^[0-9]+$ ]] || fail "submit --site $site --launcher $launcher printed '$id', not a job id"
  ids+=("$id $site $launcher")
  collect || true
done
wait_until --every 0.5 --on-timeout 'scancel ${ids[*]%% *} 2>/dev/null' 300 "every job to end" collect

first=$(scontrol show hostnames n1 | head -n 1)
for entry in "${ids[@]}"; do
  read -r id site launcher <<<"$entry"
  job=$test_tmp/jobs/$site-$launcher
  out=$job/slurm-$id.out
  state=${final[$id]}
  [ "$state" = COMPLETED ] || fail "$site --launcher $launcher: job $id ended $state: $(tail -n 5 "$out" 2>/dev/null)"
  ranks=$(sed -nE 's/^# Launch: .* = world size ([0-9]+);$/\1/p' "$job/job.sh")
  [ -n "$ranks" ] || fail "$site $launcher: the script names no world size"
  master=$first
  if grep -q '^export HPCLAUNCH_MASTER_ADDR_RESOLVE=1$' "$job/job.sh"; then
    master=$(getent ahostsv4 "$first" | awk 'NR == 1 { print $1 }')
  fi
  assert_workers "$out" "$ranks" "$master" "$site --launcher $launcher (job $id): workers' RANK WORLD_SIZE MASTER_ADDR"
  # On the AMD sites each rank of a direct launch sees one GPU, through ROCm's variables, as device 0.
  if [ "$launcher" = srun ] && grep -q '^export HPCLAUNCH_ACCELERATOR=amd$' "$job/job.sh"; then
    devices=$(untag <"$out" | grep -oE 'device .*$' | sort -u)
    [ -n "$devices" ] || fail "$site: no rank reported its devices"
    while read -r _ local_rank rocr hip; do
      [ "$local_rank" = 0 ] && [[ $rocr =~ ^[0-9]+$ ]] && { [ "$hip" = 0 ] || [ "$hip" = unset ]; } \
        || fail "$site: a rank was told LOCAL_RANK=$local_rank ROCR_VISIBLE_DEVICES=$rocr HIP_VISIBLE_DEVICES=$hip"
    done <<<"$devices"
  fi
done
echo "ok: ${#ids[@]} jobs on the test cluster, $((${#cases[@]} - ${#ids[@]})) retired scripts rendered"
