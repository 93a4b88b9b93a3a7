#!/usr/bin/env bash
# The layer check (cmake/CheckLayers.cmake, run before every launcher library is built) passes on the tree and
# refuses an include from a lower layer to a higher one, naming file:line and the rule; in a scheduler's folder
# (launcher/schedulers/NAME/, whose files span layers by their names) too.
source "$(dirname "$0")/lib.sh"

layers="util|runtime util|agent runtime|site util|plan site|render plan"
parts="dialect dialect in_job|scheduler backend"
check() { cmake -DROOT="$1" "-DLAYERS=$2" "-DPARTS=${3:-$parts}" -P "$HPCLAUNCH_SOURCE_DIR/cmake/CheckLayers.cmake" 2>&1; }

# The real tree with the real table (read from launcher/CMakeLists.txt, so the two cannot drift).
table=$(sed -n '/^set(hpclaunch_layers/,/)$/p' "$HPCLAUNCH_SOURCE_DIR/launcher/CMakeLists.txt" | grep -o '"[a-z_ ]*"' | tr -d '"' | paste -sd'|')
[ -n "$table" ] || fail "no layer table found in launcher/CMakeLists.txt"
real_parts=$(sed -n 's/^set(hpclaunch_scheduler_parts \(.*\))$/\1/p' "$HPCLAUNCH_SOURCE_DIR/launcher/CMakeLists.txt" |
  grep -o '"[a-z_ ]*"' | tr -d '"' | paste -sd'|')
[ "$real_parts" = "$parts" ] || fail "launcher/CMakeLists.txt's scheduler parts are [$real_parts], this test's [$parts]"
out=$(check "$HPCLAUNCH_SOURCE_DIR/launcher" "$table") || fail "the tree fails its own layer check: $out"

# A copy where site/ includes plan/ is refused: profile_yaml.cc's include of plan/time_limit.h, as it was before the
# time forms moved down to util/.
mkdir -p "$test_tmp/launcher/site" "$test_tmp/launcher/plan" "$test_tmp/launcher/util"
printf '#include "util/strings.h"\n#include "site/profile.h"\n' >"$test_tmp/launcher/site/ok.cc"
printf '// a comment\n#include "plan/time_limit.h"\n' >"$test_tmp/launcher/site/profile_yaml.cc"
printf '#include "site/profile.h"\n' >"$test_tmp/launcher/plan/plan.cc"
if out=$(check "$test_tmp/launcher" "$layers"); then fail "an upward include passed the check"; fi
assert_contains "$out" "launcher/site/profile_yaml.cc:2: site/ may not include plan/ (a higher layer)"
case "$out" in *ok.cc*|*plan.cc*) fail "a permitted include was reported: $out" ;; esac

# A scheduler folder: its dialect part may include its own dialect header and lower layers, not its backend (the
# scheduler layer); its backend may include its dialect; a file named for no layer is refused.
layers2="util|site util|dialect site|scheduler dialect|plan dialect"
mkdir -p "$test_tmp/l2/launcher/schedulers/toy" "$test_tmp/l2/launcher/plan"
printf '#include "schedulers/toy/dialect.h"\n#include "site/profile.h"\n' >"$test_tmp/l2/launcher/schedulers/toy/in_job.cc"
printf '#include "schedulers/toy/dialect.h"\n#include "dialect/dialect.h"\n' >"$test_tmp/l2/launcher/schedulers/toy/backend.cc"
printf '#include "schedulers/toy/dialect.h"\n' >"$test_tmp/l2/launcher/plan/plan.cc"
out=$(check "$test_tmp/l2/launcher" "$layers2") || fail "a scheduler folder's permitted includes were refused: $out"
printf '#include "dialect/dialect.h"\n#include "schedulers/toy/backend.h"\n' >"$test_tmp/l2/launcher/schedulers/toy/dialect.cc"
printf '#include "schedulers/toy/backend.h"\n' >"$test_tmp/l2/launcher/plan/plan.cc"
printf '// nothing\n' >"$test_tmp/l2/launcher/schedulers/toy/helpers.cc"
if out=$(check "$test_tmp/l2/launcher" "$layers2"); then fail "an upward include in a scheduler folder passed the check"; fi
assert_contains "$out" "launcher/schedulers/toy/dialect.cc:2: dialect/ may not include scheduler/ (a higher layer)"
assert_contains "$out" "launcher/plan/plan.cc:1: plan/ may not include scheduler/ (a higher layer)"
assert_contains "$out" "launcher/schedulers/toy/helpers.cc: a scheduler folder's file is named for its layer"
case "$out" in *in_job.cc*|*backend.cc*) fail "a permitted include was reported: $out" ;; esac

# A table that names a layer before it is defined is an error in the table itself.
if out=$(check "$test_tmp/launcher" "util|plan site|site util"); then fail "a misordered table passed"; fi
assert_contains "$out" "layer 'plan' uses 'site', which is not below it"
echo "ok"
