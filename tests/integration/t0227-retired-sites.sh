#!/usr/bin/env bash
# Retired sites (puhti, mahti, sockeye-pbs): `submit` refuses them with exit 2 naming the successor and leaves
# nothing behind; `render` and `--dry-run` still show the script, with a warning.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
export XDG_STATE_HOME=$test_tmp/state
cd "$test_tmp"
for pair in puhti:roihu mahti:roihu sockeye-pbs:sockeye; do
  site=${pair%%:*} successor=${pair#*:}
  rc=0
  out=$("$HPCLAUNCH" submit --site "$site" --nodes 1 --account project_2001234 --job-dir "$test_tmp/$site" -- true 2>&1) || rc=$?
  assert_eq 2 "$rc" "exit status of submit --site $site"
  assert_contains "$out" "--site: $site was retired"
  assert_contains "$out" "use --site $successor"
  [ ! -e "$test_tmp/$site" ] || fail "submit --site $site left $test_tmp/$site"
  [ ! -s "$XDG_STATE_HOME/hpclaunch/jobs" ] || fail "submit --site $site wrote an index entry"
  "$HPCLAUNCH" render --site "$site" --nodes 1 --account project_2001234 -- true >"$test_tmp/script" 2>"$test_tmp/err" \
    || fail "render --site $site failed: $(cat "$test_tmp/err")"
  assert_contains "$(cat "$test_tmp/err")" "was retired"
  assert_contains "$(head -1 "$test_tmp/script")" "#!/bin/bash"
done
echo ok
