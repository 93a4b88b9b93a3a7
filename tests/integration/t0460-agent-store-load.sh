#!/usr/bin/env bash
# The rendezvous store at scale: 2,000 light agents (tests/tools/store_load: StoreClient and the real wire
# protocol, a real StoreServer in its own process) join one round, each with a distinct group rank equal to its
# node rank; a hung agent (answers heartbeats, then goes silent) is noticed and the rest form a second round
# with the same ranks. Correctness only: the timings it prints are for bench/agent/scale, not asserted here.
source "$(dirname "$0")/lib.sh"
load=${HPCLAUNCH_STORE_LOAD:?built by tests/CMakeLists.txt}

out=$("$load" --clients 2000 --heartbeat-timeout-ms 2000 --steady-s 1) || fail "store_load failed: $out"
note "$out"
assert_contains "$out" '"clients":2000' "the load generator's report"

# Bad input: one error line, exit 2.
rc=0; err=$("$load" --clients x 2>&1) || rc=$?
assert_eq 2 "$rc" "exit code for --clients x"
assert_contains "$err" "hpclaunch: error: store_load: --clients wants a number" "error line"
# Too few file descriptors: said up front, before any connection.
rc=0; err=$(bash -c "ulimit -Sn 256 && ulimit -Hn 256 && exec '$load' --clients 2000" 2>&1) || rc=$?
assert_eq 2 "$rc" "exit code with 256 open files"
assert_contains "$err" "needs 2064 open files, the limit is 256" "error line"
