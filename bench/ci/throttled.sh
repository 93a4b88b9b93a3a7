#!/usr/bin/env bash
# Runs a command on a stand-in for a slower machine than this one, in one of two ways:
#
#   bench/ci/throttled.sh CORES COMMAND [ARG...]         a budget of CORES cores' worth of CPU time (e.g. 1 or 0.5)
#   bench/ci/throttled.sh --share S COMMAND [ARG...]     about S (0.5-0.95) of every core, as on slower cores
#   e.g. git clone -q REPO x && cd x && bench/ci/throttled.sh --share 0.55 env CI=true bash .ci/run
#
# CORES: the CFS bandwidth limit of a cgroup of its own (cgroup v2's cpu.max, or v1's cpu.cfs_quota_us), over a
# 100 ms period, for the command and everything it starts; needs root and a cgroup file system it may write. Each
# core stays as fast as before: a single-threaded step (a link, a configure, one test alone) is not slowed while it
# fits the budget, and when the group has used its budget in a period all of it waits for the next.
# --share S: one busy loop pinned to each core, at the nice level whose CFS weight leaves a task of the command
# (nice 0) the share of the core nearest S (nice 1: 0.55, 2: 0.61, 3: 0.66, 5: 0.75, ...); every step is slowed, the
# serial ones too, as on slower cores. A command that runs more tasks than cores gets more than S in all. No root.
# Either way sleeps, timeouts and the network take as long as they would anyway, as on a slower machine.
# docs/install.md ("The slower machine, emulated") has the runs, and how they compare with issue 43's machine.
set -euo pipefail
usage() { sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 2 ] || usage

# share S COMMAND...: the busy loops beside the command.
share() {
  local want=$1 chosen best got cpu
  shift
  # The nice level whose CFS weight w (the kernel's sched_prio_to_weight for nice 0..19) leaves a nice-0 task beside
  # one loop the share 1024/(1024+w) nearest S, and that share; nothing when S is not a share from 0.5 to 0.95.
  chosen=$(awk -v s="$want" 'BEGIN {
    if (s !~ /^0?\.[0-9]+$/ || s < 0.5 || s > 0.95) exit 1
    split("1024 820 655 526 423 335 272 215 172 137 110 87 70 56 45 36 29 23 18 15", w, " ")
    for (i = 1; i <= 20; i++) { d = 1024 / (1024 + w[i]) - s; if (i == 1 || d * d < best) { best = d * d; n = i } }
    printf "%d %.2f", n - 1, 1024 / (1024 + w[n]) }') ||
    { echo "throttled.sh: --share '$want' is not a share of a core from 0.5 to 0.95: write e.g. 0.55" >&2; exit 2; }
  read -r best got <<<"$chosen"
  loops=()
  for ((cpu = 0; cpu < $(nproc); cpu++)); do
    taskset -c "$cpu" nice -n "$best" bash -c 'while :; do :; done' &
    loops+=($!)
  done
  # shellcheck disable=SC2317  # run by the trap
  stop_loops() { kill "${loops[@]}" 2>/dev/null || true; }
  trap stop_loops EXIT
  echo "throttled.sh: $* with a busy loop at nice $best on each of $(nproc) cores (a share of $got of each)" >&2
  rc=0
  "$@" || rc=$?
  exit $rc
}
if [ "$1" = --share ]; then
  [ $# -ge 3 ] || usage
  shift
  share "$@"
fi

cores=$1
shift
period=100000
quota=$(awk -v c="$cores" 'BEGIN { q = int(c * 100000); if (c !~ /^[0-9]*\.?[0-9]+$/ || q < 1000) exit 1; print q }') ||
  { echo "throttled.sh: CORES '$cores' is not a number of cores of at least 0.01: write e.g. 1 or 0.5" >&2; exit 2; }
name=hpclaunch-throttled-$$
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then  # cgroup v2
  group=/sys/fs/cgroup/$name
  mkdir "$group" 2>/dev/null || { echo "throttled.sh: cannot make $group (not root, or cgroup v2 read-only here)" >&2; exit 2; }
  echo "$quota $period" >"$group/cpu.max"
elif [ -d /sys/fs/cgroup/cpu ]; then  # cgroup v1
  group=/sys/fs/cgroup/cpu/$name
  mkdir "$group" 2>/dev/null || { echo "throttled.sh: cannot make $group (not root, or cgroup v1 read-only here)" >&2; exit 2; }
  echo "$period" >"$group/cpu.cfs_period_us"
  echo "$quota" >"$group/cpu.cfs_quota_us"
else
  echo "throttled.sh: no cgroup cpu controller under /sys/fs/cgroup" >&2
  exit 2
fi
# The group goes when the command has ended and nothing of it is left inside.
# shellcheck disable=SC2317  # run by the trap
cleanup() { rmdir "$group" 2>/dev/null || echo "throttled.sh: $group kept: processes of the command are still in it" >&2; }
trap cleanup EXIT
echo "throttled.sh: $* with $cores cores' worth of CPU ($quota us every $period us, $group)" >&2
rc=0
bash -c 'echo $$ >"$1/cgroup.procs"; shift; exec "$@"' throttled "$group" "$@" || rc=$?
exit $rc
