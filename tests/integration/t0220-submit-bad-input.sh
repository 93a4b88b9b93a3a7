#!/usr/bin/env bash
# Bad input to `hpclaunch submit`: each case gives exactly one line on stderr naming the flag or file:line and
# the fix, exits 2, writes no job directory and never calls the scheduler (sbatch/qsub on PATH are spies that
# record any call: a call is a failure).
source "$(dirname "$0")/lib.sh"
need_hpclaunch

mkdir -p "$test_tmp/bin" "$test_tmp/work" "$test_tmp/xdg/hpclaunch/sites"
for tool in sbatch qsub; do
  printf '#!/bin/sh\necho "$0 $*" >>%q\necho 1\n' "$test_tmp/called" >"$test_tmp/bin/$tool"
  chmod +x "$test_tmp/bin/$tool"
done
export PATH=$test_tmp/bin:$PATH XDG_CONFIG_HOME=$test_tmp/xdg
cd "$test_tmp/work"

printf 'name: broken\nscheduler: slurm\nnode: {gpus: 4, cores: 64}\nlaunch: {default: srun, allowed: [srun]}\nqueus: []\n' \
  >"$test_tmp/broken.yaml"

# expect "EXPECTED STDERR LINE" ARG...
expect() {
  local want=$1 rc=0
  shift
  "$HPCLAUNCH" submit "$@" >"$test_tmp/out" 2>"$test_tmp/err" || rc=$?
  assert_eq 2 "$rc" "exit code of submit $*"
  assert_eq "hpclaunch: error: $want" "$(cat "$test_tmp/err")" "stderr of submit $*"
  assert_eq "" "$(cat "$test_tmp/out")" "stdout of submit $*"
}

pm=(--site perlmutter --account m1234_g)
expect "--site: unknown site 'perlmuter' (did you mean 'perlmutter'?); run \`hpclaunch sites\` for the list, or add one with --site-file" \
  --site perlmuter -- python train.py
expect "--nodes: 0 is below 1; use --nodes 1 or more" "${pm[@]}" --nodes 0 -- python train.py
expect "--nodes: 9 is more than the 8 nodes debug allows on perlmutter; use --nodes 8 or fewer, or another qos" \
  "${pm[@]}" --qos debug --nodes 9 -- python train.py
expect "--time: 2-00:00:01 is more than the 2-00:00:00 limit of regular on perlmutter; use --time 2-00:00:00 or less, or another qos" \
  "${pm[@]}" --time 2-00:00:01 -- python train.py
expect "--time: '90:00:00:00' is not a time limit; use MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS" \
  "${pm[@]}" --time 90:00:00:00 -- python train.py
expect "--gpus-per-node: 8 is more than the 4 GPUs of a perlmutter node; use --gpus-per-node 4 or fewer and more --nodes" \
  "${pm[@]}" --gpus-per-node 8 -- python train.py
expect "--account: roihu requires an account; add --account project_2001234" --site roihu -- python train.py
# An account of another form than the site's usual ones is the scheduler's to judge: a warning, and it renders.
"$HPCLAUNCH" render --site perlmutter --account def-x -- python train.py >/dev/null 2>"$test_tmp/err" \
  || fail "an unusual account was refused: $(cat "$test_tmp/err")"
assert_contains "$(cat "$test_tmp/err")" "warning: 'def-x' does not look like a perlmutter account"
# The command users type first: no account on a site that charges a default project.
"$HPCLAUNCH" render --site perlmutter --nodes 2 -- python train.py >/dev/null 2>"$test_tmp/err" \
  || fail "render --site perlmutter --nodes 2 -- python train.py failed: $(cat "$test_tmp/err")"
# The launchers named are the registry's, as submit --help names them ("agent (one task per node), srun, mpirun or
# pals (one task per GPU)"; a scheduler folder's own launcher joins them).
launchers=$("$HPCLAUNCH" submit --help | sed -n 's/^ *--launcher TEXT *//p' | sed 's/ (one task per node)//; s/ (one task per GPU)//')
assert_contains "$launchers" "agent, srun, mpirun"
expect "--launcher: unknown launcher 'torchrun'; use $launchers" "${pm[@]}" --launcher torchrun -- python train.py
# torchrun as the command: a copy in every worker slot, each starting its own workers (issue 53: it ran 4 jobs).
expect "--: the command is torchrun, which starts its own workers, but the job's launch starts a copy of it in every worker slot: the world would be the wrong size; drop it and its flags and give the script, \`-- python SCRIPT ARG...\`: the agent launch does torchrun's job (--gpus-per-node is its --nproc-per-node)" \
  --site local --nodes 2 --gpus-per-node 2 -- torchrun --nproc_per_node=2 x.py
# What only the agent does: watch for hangs, hold nodes back as spares.
expect "--hang-timeout: the srun launch starts the command itself: only the agent watches for hangs; use --launcher agent, or drop --hang-timeout" \
  "${pm[@]}" --launcher srun --hang-timeout 60 -- python train.py
expect "--spares: the srun launch starts every rank at once: only the agent can hold a node back as a spare; use --launcher agent, or drop --spares" \
  "${pm[@]}" --launcher srun --spares 1 -- python train.py
expect "--spares: -1 is below 0; use 0 (none) or more nodes" "${pm[@]}" --launcher agent --spares -1 -- python train.py
expect "--launcher: srun needs local or slurm, but sockeye-pbs runs pbs; use --launcher mpirun" \
  --site sockeye-pbs --account st-x-1-gpu --launcher srun -- python train.py
expect "--: no command after \`--\`; end the options with \`-- CMD [ARG...]\`, e.g. \`-- python train.py\`" "${pm[@]}" --
expect "--: no command after \`--\`; end the options with \`-- CMD [ARG...]\`, e.g. \`-- python train.py\`" "${pm[@]}"
# The last keys are a block for each scheduler (its own options): the registry's, the folders the build finds.
scheduler_blocks=$(ls "$HPCLAUNCH_SOURCE_DIR/launcher/schedulers" | while read -r d; do [ -d "$HPCLAUNCH_SOURCE_DIR/launcher/schedulers/$d" ] && echo "$d"; done | sort | paste -sd, | sed 's/,/, /g')
expect "$test_tmp/broken.yaml:5:1: unknown key 'queus' (did you mean 'queues'?); remove it or use one of: name, title, status, retired_on, successors, extends, scheduler, scheduler_version, node, queues, gpu_request, account, modules, setup, container, env, launch, rendezvous, requeue, scratch, directives, sources, learned, submit_check, unverified, memory, scratch_only, variants, interconnect, account_directives, notices, arrays, snapshot, snapshot_exclude, snapshot_max_size, login_host, $scheduler_blocks" \
  --site-file "$test_tmp/broken.yaml" "${pm[@]}" -- python train.py
expect "--site-file: cannot read site file '$test_tmp/nope.yaml'; check the path and its permissions" \
  --site-file "$test_tmp/nope.yaml" "${pm[@]}" -- python train.py
# A profile whose launch.allowed names a launcher its scheduler cannot start (the Slurm/PBS dialects say which).
printf 'name: srun-on-pbs\nscheduler: pbs\nnode: {gpus: 1, cores: 8}\nlaunch: {default: srun, allowed: [srun]}\n' \
  >"$test_tmp/srun-on-pbs.yaml"
expect "$test_tmp/srun-on-pbs.yaml:1:1: launch.allowed: srun needs local or slurm but the scheduler is pbs; drop srun from launch.allowed" \
  --site-file "$test_tmp/srun-on-pbs.yaml" --site srun-on-pbs -- python train.py
expect "--env: 'A B' is not a variable name; use letters, digits and _, not starting with a digit" "${pm[@]}" --env 'A B=1' -- x
expect "--nodes: 'two' is not a valid value; see \`hpclaunch submit --help\`" "${pm[@]}" --nodes two -- x
expect "--acount: unknown option (did you mean '--account'?); see \`hpclaunch submit --help\`" "${pm[@]}" --acount m1_g -- x
expect "submit: unexpected argument 'train.py'; put the command after \`--\`; see \`hpclaunch submit --help\`" "${pm[@]}" train.py

# A broken profile in the user's directory is reported the same way, with its path.
cp "$test_tmp/broken.yaml" "$test_tmp/xdg/hpclaunch/sites/broken.yaml"
expect "$test_tmp/xdg/hpclaunch/sites/broken.yaml:5:1: unknown key 'queus' (did you mean 'queues'?); remove it or use one of: name, title, status, retired_on, successors, extends, scheduler, scheduler_version, node, queues, gpu_request, account, modules, setup, container, env, launch, rendezvous, requeue, scratch, directives, sources, learned, submit_check, unverified, memory, scratch_only, variants, interconnect, account_directives, notices, arrays, snapshot, snapshot_exclude, snapshot_max_size, login_host, $scheduler_blocks" \
  "${pm[@]}" -- python train.py
rm "$test_tmp/xdg/hpclaunch/sites/broken.yaml"

# --snapshot: too large, a file it cannot read, a size that is not one (docs/snapshot.md).
mkdir -p "$test_tmp/work/code" && cd "$test_tmp/work/code"
head -c 2000 /dev/zero >big.bin && echo 'x=1' >small.py
expect "--snapshot: the snapshot of $test_tmp/work/code would be 2.0 KiB in 2 files, over the limit of 100 B, --snapshot-max-size; largest: big.bin (2.0 KiB), small.py (4 B); leave some out with --snapshot-exclude PATTERN, or raise --snapshot-max-size" \
  "${pm[@]}" --snapshot --snapshot-max-size 100 -- python small.py
expect "--snapshot-max-size: 'lots' is not a size; give one such as 512M or 2G (K, M, G, T: powers of 1024)" \
  "${pm[@]}" --snapshot --snapshot-max-size lots -- python small.py
echo 'secret' >secret.py && chmod 000 secret.py
no_dac=()  # root reads any file: without CAP_DAC_OVERRIDE it reads as its owner would
[ "$(id -u)" != 0 ] || no_dac=(setpriv --bounding-set -dac_override,-dac_read_search)
rc=0
"${no_dac[@]}" "$HPCLAUNCH" submit "${pm[@]}" --snapshot -- python small.py >"$test_tmp/out" 2>"$test_tmp/err" || rc=$?
assert_eq 2 "$rc" "exit code for a snapshot with an unreadable file"
assert_eq "hpclaunch: error: $test_tmp/work/code/secret.py: cannot be read for the snapshot: Permission denied; make it readable, or leave it out with --snapshot-exclude PATTERN" \
  "$(cat "$test_tmp/err")" "stderr for a snapshot with an unreadable file"
"${no_dac[@]}" "$HPCLAUNCH" render "${pm[@]}" --snapshot --snapshot-exclude secret.py -- python small.py >/dev/null 2>"$test_tmp/err" ||
  fail "--snapshot-exclude of the unreadable file: $(cat "$test_tmp/err")"
[ ! -e "$test_tmp/work/code/hpclaunch-jobs" ] || fail "a refused snapshot left a job directory"
cd "$test_tmp/work"

[ ! -e "$test_tmp/work/hpclaunch-jobs" ] || fail "bad input left a job directory: $(ls -R "$test_tmp/work/hpclaunch-jobs")"
[ ! -e "$test_tmp/called" ] || fail "bad input reached the scheduler: $(cat "$test_tmp/called")"

# A job directory that cannot be written: a failure (exit 1), one line, nothing submitted.
mkdir -p "$test_tmp/ro" && chmod 555 "$test_tmp/ro"
if [ "$(id -u)" != 0 ]; then
  rc=0; "$HPCLAUNCH" submit "${pm[@]}" --job-dir "$test_tmp/ro/job" -- x 2>"$test_tmp/err" || rc=$?
  assert_eq 1 "$rc" "exit code for an unwritable job directory"
fi
# A job directory whose parent is a file cannot be created, even by root: exit 1, one line, nothing submitted.
touch "$test_tmp/afile"
rc=0; "$HPCLAUNCH" submit "${pm[@]}" --job-dir "$test_tmp/afile/job" -- x >/dev/null 2>"$test_tmp/err" || rc=$?
assert_eq 1 "$rc" "exit code for a job directory that cannot be created"
assert_eq 1 "$(wc -l <"$test_tmp/err")" "lines of error for a job directory that cannot be created"
assert_contains "$(cat "$test_tmp/err")" "hpclaunch: error: $test_tmp/afile: cannot create the job directory:"
[ ! -e "$test_tmp/called" ] || fail "an unwritable job directory reached the scheduler: $(cat "$test_tmp/called")"

# An existing, non-empty --job-dir is refused before anything is written.
mkdir -p "$test_tmp/used" && touch "$test_tmp/used/keep"
expect "--job-dir: '$test_tmp/used' already exists and is not an empty directory; give a new directory, or leave --job-dir out" \
  "${pm[@]}" --job-dir "$test_tmp/used" -- x
assert_eq "keep" "$(ls "$test_tmp/used")" "contents of the refused --job-dir"

# Retired sites still render, with one warning line naming the successors.
"$HPCLAUNCH" render --site puhti --account project_1 -- x >/dev/null 2>"$test_tmp/err"
assert_eq "hpclaunch: warning: puhti was retired on 2026-07-31; consider roihu (--site roihu)" "$(cat "$test_tmp/err")"
