#!/usr/bin/env bash
# t0069: bench/ci/throttled.sh, the stand-in for a slower machine that cold runs are measured with (docs/install.md).
# A CORES or --share it cannot read is refused in one line, exit 2, before anything starts. --share 0.5: a busy loop
# of 1.5 s shares its core with the script's loop at nice 0, so it gets at most half of it (under 1 s of CPU, against
# 1.5 s alone; other load only lowers it), and no loop is left afterwards. CORES 0.25: a busy loop of 1.5 s gets about
# a quarter of its time (under 0.6 s), the command's exit code comes back, and the group is gone afterwards; that
# part needs root (a cgroup of its own): a skip elsewhere (tests/skips-allowed.txt).
source "$(dirname "$0")/lib.sh"
script=$HPCLAUNCH_SOURCE_DIR/bench/ci/throttled.sh
bash -n "$script" || fail "throttled.sh does not parse"
if command -v shellcheck >/dev/null; then shellcheck "$script" || fail "shellcheck throttled.sh"; fi

# refused MESSAGE ARG...: throttled.sh ARG... true exits 2 with MESSAGE alone.
refused() {
  local want=$1 rc=0 err
  shift
  err=$("$script" "$@" true 2>&1) || rc=$?
  assert_eq 2 "$rc" "exit code for '$*'"
  assert_eq "$want" "$err" "the refusal of '$*'"
}
refused "throttled.sh: CORES 'half' is not a number of cores of at least 0.01: write e.g. 1 or 0.5" half
refused "throttled.sh: --share '1.5' is not a share of a core from 0.5 to 0.95: write e.g. 0.55" --share 1.5
note "ok: a bad CORES and a bad --share refused in one line"

# cpu_seconds OUTPUT: the CPU time of the command's children, from `times`' second line (its last line here; not in a
# pipeline, which would be a subshell's), in seconds.
cpu_seconds() {
  awk 'END { split($1, u, /[ms]/); split($2, s, /[ms]/); printf "%.2f", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' <<<"$1"
}
loop='timeout 1.5 bash -c "while :; do :; done"; times; exit 3'
rc=0
out=$("$script" --share 0.5 bash -c "$loop" 2>"$test_tmp/err") || rc=$?
assert_eq 3 "$rc" "the command's exit code through --share ($(cat "$test_tmp/err"))"
assert_contains "$(cat "$test_tmp/err")" "with a busy loop at nice 0 on each of $(nproc) cores (a share of 0.50 of each)"
seconds=$(cpu_seconds "$out")
awk -v s="$seconds" 'BEGIN { exit !(s > 0.1 && s < 1.0) }' ||
  fail "a 1.5 s busy loop under --share 0.5 used $seconds s of CPU; expected at most 0.75"
sleep 0.2
left=$(pgrep -f '^bash -c while :; do :; done$' || true)
assert_eq "" "$left" "busy loops left after --share"
note "ok: 1.5 s of busy loop got $seconds s of CPU under --share 0.5; exit code 3 came back; no loop left"

[ "$(id -u)" = 0 ] || skip "not root: no cgroup of its own to throttle in"
# The loop's own CPU time, from bash's `times` (user and system of its children), in seconds.
rc=0
out=$("$script" 0.25 bash -c "$loop" 2>"$test_tmp/err") || rc=$?
assert_eq 3 "$rc" "the command's exit code through throttled.sh ($(cat "$test_tmp/err"))"
seconds=$(cpu_seconds "$out")
awk -v s="$seconds" 'BEGIN { exit !(s > 0.1 && s < 0.6) }' ||
  fail "a 1.5 s busy loop under 0.25 cores used $seconds s of CPU; expected about 0.375"
group=$(sed -n 's/.*, \(\/sys\/fs\/cgroup\/[^)]*\)).*/\1/p' "$test_tmp/err")
[ -n "$group" ] || fail "throttled.sh did not name its group: $(cat "$test_tmp/err")"
[ ! -e "$group" ] || fail "$group is still there after the command ended"
note "ok: 1.5 s of busy loop got $seconds s of CPU under 0.25 cores; exit code 3 came back; $group removed"
echo PASS
