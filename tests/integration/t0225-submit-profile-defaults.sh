#!/usr/bin/env bash
# A profile's defaults apply when the flag is not given, and the flag wins when it is: `requeue: {enabled: true}`
# (--requeue / --no-requeue). CLI11 set an optional<bool> flag to false when it was absent, so a profile's
# requeue default never applied.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
cat >"$test_tmp/requeuing.yaml" <<'YAML'
name: requeuing
extends: perlmutter
requeue: {enabled: true}
YAML
render() { "$HPCLAUNCH" render --site requeuing --site-file "$test_tmp/requeuing.yaml" --nodes 1 --account m1_g "$@" -- true; }
assert_contains "$(render)" "#SBATCH --requeue" "script of a profile that requeues by default"
assert_not_contains "$(render --no-requeue)" "#SBATCH --requeue" "script with --no-requeue"
assert_not_contains "$("$HPCLAUNCH" render --site perlmutter --nodes 1 --account m1_g -- true)" "#SBATCH --requeue" "perlmutter's script"
assert_contains "$("$HPCLAUNCH" render --site perlmutter --nodes 1 --account m1_g --requeue -- true)" "#SBATCH --requeue"
echo ok
