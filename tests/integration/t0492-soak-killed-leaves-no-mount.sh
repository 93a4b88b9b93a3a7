#!/usr/bin/env bash
# t0492: a fault soak that is killed (as CTest kills a test past its time limit) leaves no tmpfs mounted. soak.py
# mounts its disk_full tmpfs on the faulted job's directory and unmounts it in `finally`, which SIGKILL skips: an
# earlier session found one such mount under /tmp, left by a killed t0490. The soak now mounts it in a mount
# namespace of its own, which ends with its last process. Here a short soak is SIGKILLed, with its agents and
# workers, while the faulted job trains in the tmpfs; afterwards this machine's mount table has nothing under the
# soak's directory. Root only (mounting), as CI runs it; ~17 s (the unfaulted reference run comes first), but CI's
# loaded 2-core machine once took over 60 s to reach the faulted job, so the wait for it allows 240 s.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
[ -n "${HPCLAUNCH_TRAIN:-}" ] || skip "HPCLAUNCH_TRAIN unset (hpclaunch-train not built)"
need_cmd setsid unshare mount
[ "$(id -u)" -eq 0 ] || fail "needs root (the soak mounts a tmpfs), as CI runs it"
work=$test_tmp/soak
setsid python3 "$HPCLAUNCH_SOURCE_DIR/bench/soak/soak.py" --hpclaunch "$HPCLAUNCH" --train "$HPCLAUNCH_TRAIN" \
  --work "$work" --seed 3 --faults 2 --kinds disk_full --steps 300 --timeout 300 >"$test_tmp/out" 2>&1 &
pid=$!
soak_processes() { pgrep -f -- "$work/" || true; }  # whatever names its directory
cleanup_soak() {  # everything the soak started: its process group, and soak_processes
  kill -KILL -- -"$pid" 2>/dev/null || true
  local p
  for p in $(soak_processes); do kill -KILL "$p" 2>/dev/null || true; done
}
trap 'rc=$?; cleanup_soak; _lib_cleanup $rc' EXIT

# Wait until the faulted job writes its metrics in the tmpfs (/proc/PID/root sees the soak's own mounts).
wait_until 240 "the faulted job's metrics in the tmpfs" '
  kill -0 "$pid" || fail "the soak ended before its faulted job ran: $(tail -5 "$test_tmp/out")"
  tail -5 "$test_tmp/out"; [ -s "/proc/$pid/root$work/job/metrics.jsonl" ]'
grep -q " $work/job tmpfs " "/proc/$pid/mounts" ||
  fail "the soak trains with no tmpfs on $work/job (so this test shows nothing): $(tail -5 "$test_tmp/out")"

cleanup_soak
# The namespace ends with the last of its processes.
wait_until 10 "the killed soak's processes to end" 'soak_processes; [ -z "$(soak_processes)" ]'
left=$(grep -F " $work" /proc/self/mounts || true)
[ -z "$left" ] || { umount -l "$work/job" || true; fail "the killed soak left a mount: $left"; }
echo "ok: the killed soak (its tmpfs on $work/job while training) left nothing mounted"
