#!/usr/bin/env bash
# torchrun 2.x's newest flags on a real agent: --duplicate-stdout-filters / --duplicate-stderr-filters copy the
# tee'd lines that hold a filter into LOG_DIR/attempt_N/filtered_stdout.log / filtered_stderr.log (as torchrun's
# DefaultLogsSpecs, a line of every tee'd worker); --shutdown-timeout bounds the wait for a worker that ignores
# SIGTERM; PET_* variables stand for flags not given, as torchrun's `env` actions. The filters' files are compared
# with torchrun 2.15's own (the peers' venv), with torchrun's prefix given to both.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
py=$(peer_python)
cd "$test_tmp"

# Filters: two workers tee stdout and stderr; a comma in a filter written as ",,".
worker='echo "apple,pie $LOCAL_RANK"; echo "banana $LOCAL_RANK"; echo "orange $LOCAL_RANK" >&2; echo "kiwi" >&2'
"$HPCLAUNCH" agent --standalone --nproc-per-node 2 --tee 3 --log-dir "$test_tmp/logs" \
  --duplicate-stdout-filters 'apple,,pie,cherry' --duplicate_stderr_filters=orange --no-python \
  -- sh -c "$worker" >out.txt 2>err.txt || fail "agent failed: $(cat err.txt)"
out=$(sort "$test_tmp/logs/attempt_0/filtered_stdout.log") || fail "no filtered_stdout.log: $(ls -R logs)"
host=$(hostname)
assert_eq "[$host:0] apple,pie 0
[$host:1] apple,pie 1" "$out" "filtered stdout: the lines holding 'apple,pie', both workers, prefixed"
assert_eq "[$host:0] orange 0
[$host:1] orange 1" "$(sort logs/attempt_0/filtered_stderr.log)" "filtered stderr"
assert_contains "$(cat out.txt)" "banana 1" "the console still has every line"
# The same flags under torchrun 2.15, whose files are LOG_DIR/RUN_ID_XXXX/attempt_0/filtered_*.log, each line with
# the prefix of the worker's console lines: both given torchrun's default prefix, the files must be the same.
same=(--standalone --nproc-per-node 2 --tee 3 --duplicate-stdout-filters 'apple,,pie,cherry'
  --duplicate_stderr_filters=orange --log-line-prefix-template '[${role_name}${local_rank}]:' --no-python)
env -i PATH=/usr/bin:/bin HOME="$test_tmp" timeout 120 $py -m torch.distributed.run --log-dir "$test_tmp/ref" "${same[@]}" \
  sh -c "$worker" >/dev/null 2>err.txt || fail "torchrun failed: $(cat err.txt)"
"$HPCLAUNCH" torchrun --log-dir "$test_tmp/ours" "${same[@]}" sh -c "$worker" >/dev/null 2>err.txt ||
  fail "the face failed: $(cat err.txt)"
for f in filtered_stdout.log filtered_stderr.log; do
  want=$(sort ref/*/attempt_0/$f) || fail "torchrun wrote no $f: $(find ref)"
  assert_contains "$want" "[default1]:" "torchrun's $f (the reference itself)"
  assert_eq "$want" "$(sort ours/attempt_0/$f)" "$f, torchrun 2.15 and ours"
done

# Only tee'd streams are duplicated (torchrun tails the tee'd files): redirected to files only, none is.
"$HPCLAUNCH" agent --standalone --nproc-per-node 1 --redirects 3 --log-dir "$test_tmp/logs2" --duplicate-stdout-filters apple \
  --no-python -- sh -c "$worker" >/dev/null 2>err.txt || fail "agent failed: $(cat err.txt)"
assert_eq "" "$(cat logs2/attempt_0/filtered_stdout.log)" "redirected, not tee'd: nothing duplicated"

# PET_ variables: workers per node and the filters from the environment; the command line wins over them.
PET_NPROC_PER_NODE=3 PET_STANDALONE=1 PET_TEE=1 PET_LOG_DIR="$test_tmp/logs3" PET_DUPLICATE_STDOUT_FILTERS=apple \
  "$HPCLAUNCH" agent --no-python -- sh -c "$worker" >out3.txt 2>err.txt || fail "agent failed: $(cat err.txt)"
assert_eq 3 "$(grep -c apple logs3/attempt_0/filtered_stdout.log)" "PET_NPROC_PER_NODE=3 workers, PET_ filters"
PET_NPROC_PER_NODE=3 "$HPCLAUNCH" agent --standalone --nproc-per-node 1 --no-python -- sh -c 'echo "w$LOCAL_WORLD_SIZE"' \
  >out4.txt 2>err.txt || fail "agent failed: $(cat err.txt)"
assert_eq "[$host:0] w1" "$(cat out4.txt)" "--nproc-per-node on the command line wins over PET_NPROC_PER_NODE"

# --shutdown-timeout: a worker that ignores SIGTERM is killed that many seconds after the agent's SIGTERM.
"$HPCLAUNCH" agent --standalone --nproc-per-node 1 --shutdown-timeout 1 --no-python \
  -- sh -c 'trap "" TERM; echo ready; while :; do sleep 0.1; done' >out5.txt 2>err5.txt &
agent=$!
for _ in $(seq 100); do grep -q ready out5.txt 2>/dev/null && break; sleep 0.1; done
grep -q ready out5.txt || fail "the worker did not start: $(cat err5.txt)"
start=$(date +%s%N)
kill -TERM "$agent"
rc=0; wait "$agent" || rc=$?
took_ms=$(( ($(date +%s%N) - start) / 1000000 ))
assert_eq 143 "$rc" "the agent's exit after SIGTERM"
# Bounded both ways: the grace was waited (>= 1 s), and it was not torchrun's 30 s default.
[ "$took_ms" -ge 900 ] && [ "$took_ms" -lt 15000 ] || fail "stopping took ${took_ms} ms with --shutdown-timeout 1"
left=$(pgrep -af "while :; do sleep 0.1" | grep -v "^$$ " || true)
[ -z "$left" ] || fail "the worker that ignored SIGTERM is still there: $left"
echo ok
