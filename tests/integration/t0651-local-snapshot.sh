#!/usr/bin/env bash
# `submit --snapshot` on the local site: outside git the directory less .gitignore's and --snapshot-exclude's
# paths; in a git tree its tracked files with their uncommitted changes and untracked, not ignored ones, from the
# tree's top, the job starting in the submit directory's place in the copy; job.json, `status` and `status --json`
# name the commit and whether the tree was dirty; hpclaunch's own job folders are never copied (nor make a tree
# dirty); a requeued run runs the same copy after the tree changed; a spec's and a profile's `snapshot` keys.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
need_cmd git
src_dir=$HPCLAUNCH_SOURCE_DIR  # the HPCLAUNCH_ variables are unset below
for v in $(env | grep -oE '^(SLURM|PBS|PMI|OMPI_COMM|HPCLAUNCH_)[A-Z_]*' || true); do unset "$v"; done
unset MASTER_ADDR MASTER_PORT
export XDG_STATE_HOME=$test_tmp/state GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org
submit=("$HPCLAUNCH" submit --site local --nodes 1 --gpus-per-node 1 --launcher srun)
field() { python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(json.dumps(eval("d" + sys.argv[2])))' "$@"; }
show='pwd; bash ../run.sh; ls -A ..'

# 1. Outside git: the submit directory, less .gitignore's patterns (here and in a folder below) and
#    --snapshot-exclude (sub/ holds only what .gitignore names: it is not in the copy).
src=$test_tmp/plain
mkdir -p "$src/sub" "$src/data" "$src/lib"
echo 'echo "version 1"' >"$src/run.sh"
echo '*.log' >"$src/.gitignore"
echo 'gen.py' >"$src/lib/.gitignore"
touch "$src/sub/a.log" "$src/lib/util.py" "$src/lib/gen.py" "$src/data/big.bin"
chmod 750 "$src/run.sh"
ln -s run.sh "$src/link.sh"
cd "$src"
out=$("${submit[@]}" --snapshot --snapshot-exclude data/ --job-dir "$test_tmp/j1" -- bash -c 'pwd; bash run.sh; ls -A' \
  2>"$test_tmp/err") || fail "submit --snapshot outside git: $(cat "$test_tmp/err")"
assert_eq "$test_tmp/j1/snapshot
version 1
.gitignore
lib
link.sh
run.sh" "$(echo "$out" | untag)" "the job's directory, code and files (outside git)"
assert_eq "lib/.gitignore lib/util.py" "$(cd "$test_tmp/j1/snapshot" && echo lib/.gitignore lib/*)" "lib's files"
assert_eq "run.sh" "$(readlink "$test_tmp/j1/snapshot/link.sh")" "a link copied as a link"
assert_eq 750 "$(stat -c %a "$test_tmp/j1/snapshot/run.sh")" "the mode kept"
assert_eq false "$(field "$test_tmp/j1/job.json" '["snapshot"]["git"]')" "job.json's snapshot.git outside git"
assert_contains "$("$HPCLAUNCH" status "$test_tmp/j1")" "  snapshot: not a git work tree; 5 files"

# 2. A git tree with uncommitted changes, an untracked file and an ignored one; submitted from a folder in it.
repo=$test_tmp/repo
mkdir -p "$repo/exp"
cd "$repo"
git init -q .
echo 'echo "version 1"' >run.sh
echo '*.tmp' >.gitignore
touch exp/.keep
git add . && git commit -qm one
head=$(git rev-parse HEAD)
echo 'echo "version 2 (uncommitted)"' >run.sh
echo new >new.txt
touch junk.tmp
cd exp
out=$("${submit[@]}" --snapshot --job-dir "$test_tmp/j2" -- bash -c "$show" 2>"$test_tmp/err") ||
  fail "submit --snapshot in git: $(cat "$test_tmp/err")"
assert_eq "$test_tmp/j2/snapshot/exp
version 2 (uncommitted)
.gitignore
exp
new.txt
run.sh" "$(echo "$out" | untag)" "the job's directory, code and files (git)"
assert_eq "\"$head\"" "$(field "$test_tmp/j2/job.json" '["snapshot"]["commit"]')" "job.json's commit"
assert_eq true "$(field "$test_tmp/j2/job.json" '["snapshot"]["dirty"]')" "job.json's dirty"
assert_contains "$("$HPCLAUNCH" status "$test_tmp/j2")" "  snapshot: commit ${head:0:12} with uncommitted changes; 4 files"
"$HPCLAUNCH" status --json "$test_tmp/j2" >"$test_tmp/status.json"
assert_eq "\"$head\"" "$(field "$test_tmp/status.json" '["snapshot"]["commit"]')" "status --json's commit"
assert_eq "\"$test_tmp/j2/snapshot/exp\"" "$(field "$test_tmp/status.json" '["snapshot"]["workdir"]')" "status --json's workdir"

# 3. Clean: committed, and submitted twice into the default ./hpclaunch-jobs: the second copies no job folder and
#    the first job's folder (untracked) does not make the tree dirty.
cd "$repo" && git add . && git commit -qm two && head=$(git rev-parse HEAD) && cd exp
"${submit[@]}" --snapshot -- true >/dev/null 2>"$test_tmp/err" || fail "submit (clean, 1): $(cat "$test_tmp/err")"
"${submit[@]}" --snapshot --json -- true >"$test_tmp/clean.json" 2>"$test_tmp/err" || fail "submit (clean, 2): $(cat "$test_tmp/err")"
second=$(field "$test_tmp/clean.json" '["job"]["job_dir"]' | tr -d '"')
assert_eq false "$(field "$second/job.json" '["snapshot"]["dirty"]')" "dirty, with only job folders untracked"
assert_eq "\"$head\"" "$(field "$test_tmp/clean.json" '["job"]["snapshot"]["commit"]')" "submit --json's commit"
[ ! -e "$second/snapshot/exp/hpclaunch-jobs" ] || fail "a snapshot copied the job folders: $(ls -R "$second/snapshot")"
assert_contains "$("$HPCLAUNCH" status "$second")" "  snapshot: commit ${head:0:12}, clean;"

# 4. A requeued run runs the same copy: the first run changes the tree and asks for a requeue (exit 99).
requeued='echo "run ${HPCLAUNCH_RESTART_COUNT:-0}: $(bash ../run.sh)"
if [ -z "$HPCLAUNCH_RESTART_COUNT" ]; then echo "echo version 3" >"$0"; exit 99; fi'
out=$("${submit[@]}" --snapshot --requeue --max-requeues 1 --job-dir "$test_tmp/j4" -- bash -c "$requeued" "$repo/run.sh" \
  2>"$test_tmp/err") || fail "requeued snapshot job: $(cat "$test_tmp/err")"
assert_eq "run 0: version 2 (uncommitted)
run 1: version 2 (uncommitted)" "$(echo "$out" | untag | grep '^run ')" "both runs of a requeued job"
assert_eq "echo version 3" "$(cat "$repo/run.sh")" "the tree, changed during the first run"

# 5. A job spec's keys, and --no-snapshot over them; a profile's snapshot and limit.
cd "$src"
printf 'site: local\nnodes: 1\ngpus_per_node: 1\nlauncher: srun\nsnapshot: true\nsnapshot_exclude: [data/, lib/]\ncommand: [ls]\n' \
  >"$test_tmp/spec.yaml"
out=$("$HPCLAUNCH" submit --spec "$test_tmp/spec.yaml" --job-dir "$test_tmp/j5" 2>"$test_tmp/err") || fail "spec: $(cat "$test_tmp/err")"
assert_eq "link.sh run.sh" "$(echo "$out" | untag | xargs)" "the spec's snapshot, less its excludes"
"$HPCLAUNCH" submit --spec "$test_tmp/spec.yaml" --no-snapshot --job-dir "$test_tmp/j6" >/dev/null 2>&1 || fail "--no-snapshot"
[ ! -e "$test_tmp/j6/snapshot" ] || fail "--no-snapshot took a snapshot"
printf 'name: local-snap\nextends: local\nsnapshot: true\nsnapshot_max_size: 10\n' >"$test_tmp/local-snap.yaml"
rc=0
"$HPCLAUNCH" submit --site local-snap --site-file "$test_tmp/local-snap.yaml" --job-dir "$test_tmp/j7" -- true \
  >/dev/null 2>"$test_tmp/err" || rc=$?
assert_eq 2 "$rc" "exit code of a snapshot over the profile's limit"
assert_eq 1 "$(wc -l <"$test_tmp/err")" "lines of the refusal"
assert_contains "$(cat "$test_tmp/err")" "over the limit of 10 B, site local-snap's snapshot_max_size; largest: "
[ ! -e "$test_tmp/j7" ] || fail "a refused snapshot left its job directory"
printf 'site: local\nsnapshot_max_size: lots\ncommand: [true]\n' >"$test_tmp/bad.yaml"
assert_fails "$test_tmp/bad.yaml:2:20: snapshot_max_size: 'lots' is not a size" "$HPCLAUNCH" submit --spec "$test_tmp/bad.yaml"

# README's --snapshot line, as written, in a git tree whose train.py is edited after the submit: the job ran the
# copy (the local site runs it at once, so the edit comes after, and the copy must still hold the first version).
mapfile -t lines < <(python3 "$src_dir/tests/tools/doc_commands.py" "$src_dir" --run-by t0651)
assert_eq 1 "${#lines[@]}" "command lines README.md marks 'run by t0651'"
readme=$test_tmp/readme
mkdir -p "$readme/bin" && ln -s "$HPCLAUNCH" "$readme/bin/hpclaunch"
git init -q "$readme/code" && cd "$readme/code"
echo 'import os; print("train v1 in", os.getcwd())' >train.py && git add train.py && git commit -qm v1
out=$(PATH=$readme/bin:$PATH bash -c "${lines[0]}" 2>"$test_tmp/err") || fail "README's line failed: ${lines[0]}: $(cat "$test_tmp/err")"
echo 'print("train v2")' >train.py
job=$(ls -d "$readme/code/hpclaunch-jobs"/*/ | head -1)
assert_contains "$(echo "$out" | untag)" "train v1 in ${job%/}/snapshot" "README's --snapshot line: the job ran the copy"
assert_eq "$(git rev-parse HEAD)" "$(field "$job/job.json" '["snapshot"]["commit"]' | tr -d '"')" "the commit job.json names"
echo ok
