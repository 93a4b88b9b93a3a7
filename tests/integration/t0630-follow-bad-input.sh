#!/usr/bin/env bash
# Reliability table for following jobs and plotting (docs/reliability.md): each row is a bad input, the exit code
# and the one error line expected. Needs no scheduler and no trainer: job directories and metrics files are made
# here in the formats submit and hpclaunch-train write.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
export XDG_STATE_HOME=$test_tmp/state
cd "$test_tmp"
T=$test_tmp

# Fixtures: a job directory submit would write for Slurm, one whose job.json is not JSON, a plain directory, and
# metrics files.
mkdir -p ok notjson plain
echo '{"site": "perlmutter", "scheduler": "slurm", "nodes": 2, "job_name": "ok", "command": ["true"]}' >ok/plan.json
echo '{"job_id": "4242", "scheduler": "slurm", "site": "perlmutter", "submitted_at": "20261121-104500", "nodes": 2}' >ok/job.json
cp ok/plan.json notjson/plan.json
echo 'not json' >notjson/job.json
step='{"type":"step","step":1,"loss":1}'
printf '' >empty.jsonl
printf '%s\n{"type":"st' "$step" >cut.jsonl
printf '%s\noops\n' "$step" >garbage.jsonl
printf '{"type":"validation","step":1,"val_loss":1}\n' >nosteps.jsonl
printf '{"type":"step","step":1}\n' >noloss.jsonl
printf '[1, 2]\n' >array.jsonl
printf '%s\n' "$step" >good.jsonl
# A Slurm that cannot be reached: a config naming a dead port, and no scheduler commands at all.
printf 'ClusterName=x\nSlurmctldHost=localhost\nSlurmctldPort=1\n' >dead.conf
mkdir -p nobin
ln -sf "$(command -v bash)" nobin/bash

# exit # message (after "hpclaunch: error: ") # command... (# apart: a message may hold |)
rows=(
  "2#nosuchjob: is neither a job directory nor a job id listed by \`hpclaunch jobs\`#status nosuchjob"
  "2#$T/plain: is a directory but not a job directory (no job.json or plan.json)#status $T/plain"
  "1#$T/notjson/job.json: is not a JSON object#status $T/notjson"
  "1#squeue -h -r -t all -j 4242 -O JobArrayID:40|,State:24|,Reason:200|,exit_code:12|: failed (exit 1): slurm_load_jobs error#env SLURM_CONF=$T/dead.conf status $T/ok"
  "1#scancel 4242: failed#env SLURM_CONF=$T/dead.conf cancel $T/ok"
  "1#squeue -h -r -t all -j 4242 -O JobArrayID:40|,State:24|,Reason:200|,exit_code:12|: not found on this machine#env PATH=$T/nobin status $T/ok"
  "1#squeue -h -r -t all -j 4242 -O JobArrayID:40|,State:24|,Reason:200|,exit_code:12|: not found on this machine#env PATH=$T/nobin wait $T/ok"
  "2#$T/empty.jsonl: is empty: no metrics were written#plot $T/empty.jsonl"
  "2#$T/cut.jsonl:2: the last line is cut short#plot $T/cut.jsonl"
  "2#$T/garbage.jsonl:2: not a JSON object: 'oops'#plot $T/garbage.jsonl"
  "2#$T/array.jsonl:1: not a JSON object#plot $T/array.jsonl"
  "2#$T/nosteps.jsonl: holds no step records#plot $T/nosteps.jsonl"
  "2#$T/noloss.jsonl:1: step record without a numeric \"loss\"#plot $T/noloss.jsonl"
  "2#$T/missing.jsonl: cannot read the metrics file#plot $T/missing.jsonl"
  "2#$T/good.jsonl/x: cannot read the metrics file (missing)#plot $T/good.jsonl $T/good.jsonl/x"
  "2#--output: '$T/x.jpg' has neither a .png nor a .svg extension#plot $T/good.jsonl -o $T/x.jpg"
  "1#$T/none/x.png: cannot write the plot#plot $T/good.jsonl -o $T/none/x.png"
  "2#logs: --rank: Value -1 not in range 0 to 1000000#logs $T/ok --rank -1"
  "2#wait: --timeout: Value -5 not in range#wait $T/ok --timeout -5"
  "2#wait: --interval: Value 0 not in range#wait $T/ok --interval 0"
)
for row in "${rows[@]}"; do
  IFS='#' read -r want_rc want_msg cmd <<<"$row"
  read -r -a argv <<<"$cmd"
  if [ "${argv[0]}" = env ]; then
    envs=()
    i=1
    while [[ ${argv[$i]} == *=* ]]; do envs+=("${argv[$i]}"); i=$((i + 1)); done
    run=(env "${envs[@]}" "$HPCLAUNCH" "${argv[@]:$i}")
  else
    run=("$HPCLAUNCH" "${argv[@]}")
  fi
  rc=0
  "${run[@]}" >"$T/out" 2>"$T/err" || rc=$?
  assert_eq "$want_rc" "$rc" "exit code of 'hpclaunch $cmd' (stderr: $(cat "$T/err"))"
  assert_eq 1 "$(wc -l <"$T/err")" "error lines of 'hpclaunch $cmd' ($(cat "$T/err"))"
  assert_contains "$(cat "$T/err")" "hpclaunch: error: $want_msg" "error of 'hpclaunch $cmd'"
  assert_eq "" "$(cat "$T/out")" "stdout of 'hpclaunch $cmd'"
done
