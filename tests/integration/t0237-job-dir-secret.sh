#!/usr/bin/env bash
# The rendezvous secret stays out of files: a 2-node agent job on the local site whose workers print their whole
# environment; the secret the script made (learnt through an `od` on PATH that also copies what it prints to a
# file outside the job) is nowhere in the job directory, its output, `hpclaunch logs` or the workers' environment.
# The job directory is its owner's alone (0700), or what --job-dir-mode says; a bad mode is refused with exit 2
# and nothing written.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
for v in $(env | grep -oE '^(SLURM|PBS|PMI|OMPI_COMM|HPCLAUNCH_)[A-Z_]*' || true); do unset "$v"; done
unset MASTER_ADDR MASTER_PORT
cd "$test_tmp"
mkdir -p bin
real_od=$(command -v od)
cat >bin/od <<EOF2
#!/bin/bash
"$real_od" "\$@" | tee -a "$test_tmp/od.out"
EOF2
chmod +x bin/od

PATH=$test_tmp/bin:$PATH "$HPCLAUNCH" submit --site local --nodes 2 --gpus-per-node 2 --launcher agent \
  --job-dir "$test_tmp/job" -- bash -c 'env; echo "rank $RANK done"' >"$test_tmp/out" 2>&1 \
  || fail "the agent job failed: $(tail -5 "$test_tmp/out")"
secret=$(tr -d ' \n' <"$test_tmp/od.out")
assert_eq 32 "${#secret}" "length of the secret the job script made ($(cat "$test_tmp/od.out"))"
for r in 0 1 2 3; do assert_contains "$(cat "$test_tmp/job/output.log")" "rank $r done" "output.log"; done
found=$(grep -rl "$secret" "$test_tmp/job" "$test_tmp/out" || true)
[ -z "$found" ] || fail "the rendezvous secret is written in: $found"
"$HPCLAUNCH" logs "$test_tmp/job" >"$test_tmp/logs" 2>&1 || fail "logs failed: $(cat "$test_tmp/logs")"
assert_not_contains "$(cat "$test_tmp/logs")" "$secret" "hpclaunch logs"
assert_not_contains "$(cat "$test_tmp/job/output.log")" "HPCLAUNCH_RDZV_SECRET" "the workers' environment"
assert_eq 700 "$(stat -c %a "$test_tmp/job")" "mode of a job directory"

"$HPCLAUNCH" submit --site local --nodes 1 --launcher srun --job-dir-mode 750 --job-dir "$test_tmp/shared" -- true \
  >/dev/null 2>&1 || fail "a job with --job-dir-mode 750 failed"
assert_eq 750 "$(stat -c %a "$test_tmp/shared")" "mode of a job directory with --job-dir-mode 750"
rc=0
out=$("$HPCLAUNCH" submit --site local --nodes 1 --launcher srun --job-dir-mode 644 --job-dir "$test_tmp/bad" -- true 2>&1) \
  || rc=$?
assert_eq 2 "$rc" "exit code of --job-dir-mode 644"
assert_contains "$out" "--job-dir-mode: 644 does not let you read, write and enter your own job directory"
[ ! -e "$test_tmp/bad" ] || fail "a refused --job-dir-mode left $test_tmp/bad"
