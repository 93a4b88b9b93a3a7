#!/usr/bin/env bash
# The stand-in `flux` (tests/schedulers/flux: flux-core cannot be installed here, README.md there says why and what
# it does) passes its own checks: f58 job ids against flux-core's unit test values, a batch job whose `flux run`
# tasks report their ranks on two emulated nodes, a failing rank, cancel, `flux jobs`, a time limit, a dependency,
# bad options. The Flux scheduler's scripts (issue 51) are to run under it.
source "$(dirname "$0")/lib.sh"
out=$(FLUX_STANDIN_DIR=$test_tmp/flux timeout 300 bash "$HPCLAUNCH_SOURCE_DIR/tests/schedulers/flux/selftest.sh" 2>&1) ||
  fail "the stand-in flux's selftest: $out"
assert_contains "$out" "all 7 checks passed"
