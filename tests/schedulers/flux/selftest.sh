#!/usr/bin/env bash
# selftest.sh: checks the `flux` stand-in beside it against what flux-core's man pages say (README.md lists the
# facts). Two emulated nodes, node0 and node1, with 4 cores and 4 GPUs each. Exits non-zero, naming the check, on
# the first wrong behaviour. Usage: tests/schedulers/flux/selftest.sh   (needs python3 and bash; about 20 s)
set -u
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/flux-selftest.XXXXXX")
export PATH="$here:$PATH" FLUX_STANDIN_DIR="$work/state" FLUX_STANDIN_NODES='node[0-1]' FLUX_STANDIN_CORES=4 \
  FLUX_STANDIN_GPUS=4 LC_ALL=C.UTF-8
unset FLUX_URI FLUX_JOB_ID FLUX_F58_FORCE_ASCII
cd "$work" || exit 1
checks=0

cleanup() {
  flux cancel --all --quiet 2>/dev/null  # the stand-in stops what the jobs left (SIGTERM, SIGKILL after 5 s)
  wait_until 8 "every job INACTIVE" '[ -z "$(flux jobs -n -o "{id}")" ]' 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { checks=$((checks + 1)); echo "ok $checks - $*"; }
assert_eq() {  # expected actual what
  [ "$1" = "$2" ] || fail "$3: expected [$1], got [$2]"
}
# wait_until SECONDS WHAT COMMAND: polls COMMAND every 0.1 s until it succeeds; fails the test after SECONDS.
wait_until() {
  local limit=$1 what=$2 cmd=$3 end=$((SECONDS + $1))
  until eval "$cmd"; do
    [ $SECONDS -lt $end ] || fail "timed out after ${limit}s waiting for: $what"
    sleep 0.1
  done
}
state_of() { flux jobs -n -o '{state}' "$1"; }
wait_inactive() { wait_until "${2:-20}" "job $1 INACTIVE" "[ \"\$(state_of $1)\" = INACTIVE ]"; }

# 1. f58 job ids: known encodings from flux-core's own unit test (src/common/libutil/test/fluid.c, f58_tests[]),
# both ways, with the 'ƒ' prefix in a UTF-8 locale and the ASCII 'f' under FLUX_F58_FORCE_ASCII or a C locale.
# Columns: decimal id, its f58 digits.
known='0 1
1 2
57 z
1234 NH
1888 ZZ
3363 zz
3364 211
4369 2JL
65535 LUv
4294967295 7YXq9G
633528662 xyzzy
6731191091817518 uZZybuNNy
18446744073709551614 jpXCZedGfVP
18446744073709551615 jpXCZedGfVQ'
decs=$(cut -d' ' -f1 <<<"$known") f58s=$(cut -d' ' -f2 <<<"$known")
# shellcheck disable=SC2086 # one id per word
{
  assert_eq "$(sed 's/^/ƒ/' <<<"$f58s")" "$(flux job id --to=f58 $decs)" "f58 of flux-core's test ids"
  assert_eq "$(sed 's/^/f/' <<<"$f58s")" "$(FLUX_F58_FORCE_ASCII=1 flux job id --to=f58 $decs)" "ASCII f58"
  assert_eq "$decs" "$(flux job id $(sed 's/^/ƒ/' <<<"$f58s"))" "decimal of the ƒ ids"
  assert_eq "$decs" "$(flux job id --to=dec $(sed 's/^/f/' <<<"$f58s"))" "decimal of the f ids"
}
assert_eq "fxyzzy" "$(LC_ALL=C flux job id --to=f58 633528662)" "f58 in the C locale"
assert_eq "0" "$(flux job id f111)" "f111 (leading zero digits) decodes to 0"
assert_eq "0x25c2e156" "$(flux job id --to=hex ƒxyzzy)" "hex of ƒxyzzy"
assert_eq "0000.0000.25c2.e156" "$(flux job id --to=dothex ƒxyzzy)" "dothex of ƒxyzzy"
assert_eq "633528662" "$(flux job id 0000.0000.25c2.e156)" "decimal of a dothex id"
out=$(flux job id 'ƒ0OIl' 2>&1); rc=$?
[ $rc -ne 0 ] && [ "$out" = "flux-job: ƒ0OIl: malformed input" ] || fail "bad f58 digits: rc=$rc out=[$out]"
pass "f58 round trip on flux-core's test values, ASCII prefix, malformed input"

# 2. A batch job on 2 nodes: directives read from the script, the script's environment names neither the job nor
# its nodes (it asks `flux hostlist local`), and `flux run -N2 -n4` tasks get ranks, local ids, size, node count,
# the step's own FLUX_JOB_ID and their node, block-mapped.
cat >ranks.sh <<'EOF'
#!/bin/bash
# flux: -N2
# flux: --job-name=ranks -t 2m   # a comment
echo "script FLUX_JOB_ID=${FLUX_JOB_ID:-unset} SLURM=${SLURM_JOB_ID:-unset} hosts=$(flux hostlist local) uri=${FLUX_URI:+set}"
flux run -N2 -n4 bash -c 'echo "task $FLUX_TASK_RANK $FLUX_TASK_LOCAL_ID $FLUX_JOB_SIZE $FLUX_JOB_NNODES $FLUX_STANDIN_HOST $FLUX_JOB_ID"' | sort
echo "run rc=${PIPESTATUS[0]}"
EOF
chmod +x ranks.sh
id=$(SLURM_JOB_ID=99 flux batch ranks.sh) || fail "flux batch ranks.sh failed"
[[ $id =~ ^ƒ[1-9A-HJ-NP-Za-km-z]+$ ]] || fail "flux batch printed [$id], not an f58 job id"
wait_inactive "$id"
[ -f "flux-$id.out" ] || fail "default output file flux-$id.out missing (flux-batch(1): flux-{{id}}.out)"
script_line=$(grep '^script' "flux-$id.out")
assert_eq "script FLUX_JOB_ID=unset SLURM=unset hosts=node[0-1] uri=set" "$script_line" "batch script environment"
step=$(grep '^task 0 ' "flux-$id.out" | awk '{print $7}')
[ -n "$step" ] && [ "$step" != "$id" ] || fail "a task's FLUX_JOB_ID [$step] must name the step, not the batch job $id"
expected="task 0 0 4 2 node0 $step
task 1 1 4 2 node0 $step
task 2 0 4 2 node1 $step
task 3 1 4 2 node1 $step
run rc=0"
assert_eq "$expected" "$(grep -E '^(task|run rc)' "flux-$id.out")" "flux run -N2 -n4 tasks (rank local size nnodes host step)"
assert_eq "ranks COMPLETED 0 node[0-1] 2" "$(flux jobs -n -o '{name} {result} {returncode} {nodelist} {nnodes}' "$id")" \
  "flux jobs fields of the finished batch job"
pass "batch job: directives, script environment, flux run -N2 -n4 ranks on node0/node1"

# 3. A failing rank: flux run exits with the failed task's code, and the other tasks are stopped (exit-on-error at
# once; exit-timeout=1s after the first exit). A task killed by a signal counts as 128+signo.
token="selftest-token-$$"
cat >fail.sh <<EOF
#!/bin/bash
# flux: -N2
flux run -N2 -n4 -o exit-on-error bash -c 'if [ \$FLUX_TASK_RANK = 3 ]; then exit 3; fi; sleep 30 # $token
echo survived >>$work/survivors'
echo "exit-on-error rc=\$?"
flux run -N2 -n4 -o exit-timeout=1s bash -c 'if [ \$FLUX_TASK_RANK = 1 ]; then kill -SEGV \$\$; fi; sleep 30 # $token
echo survived >>$work/survivors'
echo "exit-timeout rc=\$?"
flux run -n2 bash -c 'exit \$((FLUX_TASK_RANK + 5))'
echo "largest rc=\$?"
EOF
chmod +x fail.sh
t0=$SECONDS
id=$(flux batch fail.sh)
wait_inactive "$id" 25
[ $((SECONDS - t0)) -lt 15 ] || fail "failing ranks took $((SECONDS - t0))s: the other tasks were not stopped"
assert_eq "exit-on-error rc=3" "$(grep '^exit-on-error' "flux-$id.out")" "flux run exit code with a failed rank"
assert_eq "exit-timeout rc=139" "$(grep '^exit-timeout' "flux-$id.out")" "flux run exit code after SIGSEGV"
assert_eq "largest rc=6" "$(grep '^largest' "flux-$id.out")" "flux run exit code = largest task exit code"
grep -q 'job.exception .* type=exec severity=0 bash: task rank 3 on host node1 failed (Exit 3) and exit-on-error is set' \
  "flux-$id.out" || fail "exit-on-error exception message missing: $(cat "flux-$id.out")"
grep -q 'task rank 1 on host node0 exited (Segmentation fault) and exit-timeout=1s has expired' "flux-$id.out" ||
  fail "exit-timeout exception message missing"
grep -q 'flux-job: task(s) exited with exit code 3' "flux-$id.out" || fail "flux-job exit message missing"
sleep 0.5
[ ! -e "$work/survivors" ] || fail "tasks survived their failed rank: $(wc -l <"$work/survivors") line(s)"
pgrep -f "sleep 30 # $token" >/dev/null && fail "tasks of a failed flux run still running"
assert_eq "COMPLETED" "$(flux jobs -n -o '{result}' "$id")" "the batch job's own result (its script exits 0)"
pass "failing rank: exit code, exception message, other tasks stopped"

# 4. Cancel a running batch job: its step's tasks get SIGTERM at once (flux-cancel(1): SIGTERM, SIGKILL 5 s later)
# and stop; flux jobs shows CANCELED; canceling it again is an error. A task waits in a loop of short sleeps: with
# `sleep 60 & wait` the signalled sleep could end the script's last command before bash ran its TERM trap.
cat >long.sh <<EOF
#!/bin/bash
# flux: -N2
flux run -N2 -n2 bash -c 'trap "echo \$FLUX_TASK_RANK >>$work/terms; exit 143" TERM; echo up; while :; do sleep 1; done # $token'
EOF
chmod +x long.sh
id=$(flux batch long.sh)
wait_until 10 "the long job's tasks to run" "[ \"\$(cat flux-$id.out 2>/dev/null | grep -c up)\" = 2 ]"
assert_eq "RUN RUN" "$(flux jobs -n -o '{state} {status}' "$id")" "state of the running job"
assert_eq "$id" "$(flux jobs -n -o '{id.f58}')" "flux jobs (pending and running) lists the running job"
flux cancel "$id" || fail "flux cancel $id failed"
wait_inactive "$id" 10
assert_eq "INACTIVE CANCELED CANCELED CA" "$(flux jobs -n -o '{state} {status} {result} {status_abbrev}' "$id")" \
  "flux jobs after cancel"
wait_until 5 "both tasks' TERM traps to write" '[ "$(wc -l <"$work/terms" 2>/dev/null)" = 2 ]'
assert_eq "0 1" "$(sort "$work/terms" 2>/dev/null | tr '\n' ' ' | sed 's/ $//')" "tasks that got SIGTERM on cancel"
pgrep -f "do sleep 1; done # $token" >/dev/null && fail "a canceled job's tasks still run"
out=$(flux cancel "$id" 2>&1) && fail "canceling an inactive job succeeded"
assert_eq "flux-cancel: ERROR: $id: job is inactive" "$out" "cancel of an inactive job"
pass "cancel of a running batch job"

# 5. flux jobs of finished jobs: -a lists them, the default (pending,running) does not; -f filters by result.
lines=$(flux jobs -a -n -o '{name} {status}' | sort)
expected="fail.sh COMPLETED
long.sh CANCELED
ranks COMPLETED"
assert_eq "$expected" "$lines" "flux jobs -a"
assert_eq "" "$(flux jobs -n)" "flux jobs (no inactive jobs by default)"
assert_eq "long.sh" "$(flux jobs -n -f canceled -o '{name}')" "flux jobs -f canceled"
header=$(flux jobs -a | head -1)
assert_eq "       JOBID USER     NAME       ST NTASKS NNODES     TIME INFO" "$header" "default header"
pass "flux jobs of finished jobs"

# 6. A time limit is enforced (TIMEOUT), an afterok dependency waits for its target.
id=$(flux batch -N1 -t 0.5s --wrap sleep 30)
wait_inactive "$id" 10
assert_eq "TIMEOUT timeout" "$(flux jobs -n -o '{result} {exception.type}' "$id")" "time limit"
# The target runs until this test lets it end (a file), so the dependent job is seen waiting however slow the machine.
first=$(flux batch -N2 --wrap "until [ -e $work/go ]; do sleep 0.1; done")
second=$(flux batch -N1 --dependency=afterok:"$first" --wrap echo after)
assert_eq "DEPEND" "$(state_of "$second")" "state of a job waiting on afterok"
touch "$work/go"
wait_inactive "$second" 15
assert_eq "after" "$(cat "flux-$second.out")" "the dependent job ran after its target"
pass "time limit and dependency"

# 7. Bad input: an unknown option, an option flux-batch does not have (--ntasks: it takes -n/--nslots), an
# unsatisfiable request, a script without #!.
out=$(flux batch --bogus ranks.sh 2>&1); rc=$?
assert_eq 2 "$rc" "exit code of an unknown option"
assert_eq "usage: flux batch [OPTIONS...] [SCRIPT] [ARGS...]
flux batch: error: unrecognized arguments: --bogus" "$out" "message of an unknown option"
out=$(flux batch --ntasks=4 ranks.sh 2>&1) && fail "flux batch --ntasks accepted"
[[ $out == *"unrecognized arguments: --ntasks=4"* ]] || fail "flux batch --ntasks message: $out"
out=$(flux run -N3 true 2>&1); rc=$?
[ $rc = 1 ] && [[ $out == "flux-run: ERROR: unsatisfiable request"* ]] || fail "3 nodes of 2: rc=$rc [$out]"
printf 'echo hi\n' >noshebang.sh
out=$(flux batch -N1 noshebang.sh 2>&1)
assert_eq "flux-batch: ERROR: noshebang.sh does not appear to start with '#!'" "$out" "script without #!"
pass "bad options and requests"

echo "all $checks checks passed"
