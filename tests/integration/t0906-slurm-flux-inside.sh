#!/usr/bin/env bash
# Flux inside a Slurm allocation (`--launcher flux` on a Slurm site that allows it): the job runs on the real test
# cluster (sbatch, srun), its script starts a Flux instance across its two nodes with `srun flux start` and the
# ranks with `flux run` in it; `hpclaunch exec` reads each rank from Flux's face (asked before Slurm's: Flux nests in
# Slurm). Checks each rank's RANK, LOCAL_RANK, WORLD_SIZE and node, and that a failing rank ends the job at once
# with a failed state. `flux` here is a STAND-IN (tests/schedulers/flux/flux; its README.md says what it does and
# from which man page, and how its `flux start` runs under srun): flux-core cannot be installed on this machine
# (Debian has no package; PyPI's `flux-core` is an unrelated project). Slurm, srun and the job's processes are real.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
need_cluster
need_cmd python3
standin=$HPCLAUNCH_SOURCE_DIR/tests/schedulers/flux
[ -x "$standin/flux" ] || fail "no stand-in flux at $standin/flux"
for v in $(env | grep -oE '^(FLUX)[A-Z_0-9]*' || true); do unset "$v"; done
# sbatch passes this environment on to the job: the stand-in's state and sizes (the test site's 64 cores, 4 GPUs).
export PATH=$standin:$PATH FLUX_STANDIN_DIR=$test_tmp/flux FLUX_STANDIN_CORES=64 FLUX_STANDIN_GPUS=4 LC_ALL=C.UTF-8
site_file=$test_tmp/test-flux-in-slurm.yaml
sed -e 's/^name: test-perlmutter$/name: test-flux-in-slurm/' -e 's/^launch: {default: srun, allowed: \[srun, agent, mpirun\]}$/launch: {default: srun, allowed: [srun, agent, flux]}/' \
  "$HPCLAUNCH_SOURCE_DIR/tests/integration/sites/test-perlmutter.yaml" >"$site_file"
grep -q 'allowed: \[srun, agent, flux\]' "$site_file" || fail "the test site does not allow flux: $(cat "$site_file")"
cd "$test_tmp"
submit() {  # JOBDIR ARG...: prints the id
  "$HPCLAUNCH" submit --site test-flux-in-slurm --site-file "$site_file" --account m1234_g --nodes 2 --launcher flux \
    --job-dir "$test_tmp/$1" "${@:2}" 2>"$test_tmp/$1.err" || fail "submit of $1 failed: $(cat "$test_tmp/$1.err")"
}

id=$(submit ranks -- bash -c 'echo "task $RANK $LOCAL_RANK $WORLD_SIZE $FLUX_STANDIN_HOST"')
[[ $id =~ ^[0-9]+$ ]] || fail "submit printed '$id', not a Slurm job id"
assert_contains "$(cat "$test_tmp/ranks/job.sh")" " flux start \\" "the script starts Flux in the allocation"
assert_eq COMPLETED "$(wait_job "$id")" "state of the job (output: $(cat "$test_tmp/ranks/slurm-$id.out" 2>/dev/null))"
out=$(sed 's/^ *[0-9]*: //' "$test_tmp/ranks/slurm-$id.out")  # flux run -l's "RANK: " prefix
assert_eq "0 1 2 3 4 5 6 7" "$(echo "$out" | awk '$1 == "task" { print $2 }' | sort -n | xargs)" "ranks"
assert_eq "0 0 1 1 2 2 3 3" "$(echo "$out" | awk '$1 == "task" { print $3 }' | sort -n | xargs)" "local ranks"
assert_eq "8" "$(echo "$out" | awk '$1 == "task" { print $4 }' | sort -u)" "world size"
nodes=$(scontrol show hostnames "$(sacct -n -X -j "$id" -o NodeList%100 2>/dev/null | xargs)" 2>/dev/null | xargs)
[ -n "$nodes" ] || nodes=$(echo "$out" | awk '$1 == "task" { print $5 }' | sort -u | xargs)
assert_eq 2 "$(echo "$out" | awk '$1 == "task" { print $5 }' | sort -u | wc -l)" "nodes the ranks ran on ($nodes)"
assert_eq "4 4" "$(echo "$out" | awk '$1 == "task" { n[$5]++ } END { for (h in n) print n[h] }' | xargs)" "ranks per node"

# A failing rank ends the step (-o exit-on-error) and the job fails, long before the others' sleep ends.
id=$(submit bad --time 10 -- bash -c 'if [ "$RANK" = 5 ]; then exit 7; fi; sleep 300')
assert_eq FAILED "$(wait_job "$id" 120)" "state of a job with one failed rank (output: $(cat "$test_tmp/bad/slurm-$id.out" 2>/dev/null))"
echo ok
