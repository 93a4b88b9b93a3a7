#!/usr/bin/env bash
# The test suite never writes into the user's own job index or reads the user's site profiles: lib.sh gives every
# integration script temporary XDG directories, and the unit tests' main does the same. Checked by running a
# submitting integration script (t0230) and the unit tests that submit with a HOME of our own and no XDG
# variables: that HOME's ~/.local/state and ~/.config stay empty. Also every script that runs hpclaunch sources
# lib.sh.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
unit=$HPCLAUNCH_BUILD_DIR/tests/hpclaunch_unit_tests
[ -x "$unit" ] || fail "unit test binary '$unit' not found; build the hpclaunch_unit_tests target"

for t in "$HPCLAUNCH_SOURCE_DIR"/tests/integration/t[0-9]*.sh; do
  grep -qE '\$HPCLAUNCH\b|\$\{HPCLAUNCH\}|submit_test_site' "$t" || continue
  # lib.sh gives them; a trainer script (lib-trainer.sh) that runs hpclaunch sets its own.
  grep -qE '^source .*/lib\.sh"' "$t" || grep -qE 'XDG_STATE_HOME="?\$' "$t" ||
    fail "$(basename "$t") runs hpclaunch without sourcing lib.sh (its temporary XDG dirs)"
done

home=$test_tmp/home
mkdir -p "$home"
as_user() { env -u XDG_STATE_HOME -u XDG_CONFIG_HOME -u XDG_DATA_HOME -u XDG_CACHE_HOME HOME="$home" "$@"; }
as_user bash "$HPCLAUNCH_SOURCE_DIR/tests/integration/t0230-local-submit.sh" >"$test_tmp/t0230.out" 2>&1 \
  || fail "t0230 failed under a HOME of our own: $(tail -5 "$test_tmp/t0230.out")"
as_user "$unit" -ts='submit_job,job index' >"$test_tmp/unit.out" 2>&1 \
  || fail "the submit unit tests failed under a HOME of our own: $(tail -5 "$test_tmp/unit.out")"
left=$(cd "$home" && find . -mindepth 1 | head -5)
[ -z "$left" ] || fail "tests wrote into the user's HOME: $left"
# And without the guards, the same run would have: an index in HOME (so this test can fail).
as_user "$HPCLAUNCH" submit --site local --nodes 1 --launcher srun --job-dir "$test_tmp/probe" -- true >/dev/null 2>&1 \
  || fail "a plain local submit failed"
assert_file "$home/.local/state/hpclaunch/jobs"
