#!/usr/bin/env bash
# Hangs that never exit, found, shown and restarted (docs/agent.md, "Hangs"), on 2 emulated nodes x 2 workers (two
# agents on loopback) with a real torch 2.15 gloo script (lib-hang-client.py) that reports its steps with
# hpclaunch.progress.step(). Rank 2 hangs in attempt 0 by SIGSTOP and by a sleep while the others wait in their
# allreduce (t0441: a blocking read, a crash loop, a silent program). Each time: node 1's agent sees rank 2 without
# progress past --hang-timeout, records every worker's stacks with py-spy (the peers' venv) in
# JOBDIR/stacks/attempt_0/, names rank 2's frame in the script, kills the group, and the job restarts and ends
# with the values of a run without a fault.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
source "$HPCLAUNCH_SOURCE_DIR/tests/integration/lib-hang.sh"
check_hang stop "os.kill(os.getpid(), signal.SIGSTOP)"
assert_contains "$(cat job-stop/stacks/attempt_0/rank_2.txt)" "stopped (SIGSTOP or a debugger)" "the kernel's word"
check_hang sleep "time.sleep(3600)"
echo ok
