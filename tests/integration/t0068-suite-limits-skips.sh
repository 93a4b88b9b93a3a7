#!/usr/bin/env bash
# t0068: the suite cannot hang or pass in silence. Every CTest test of this build has a time limit; each Slurm test
# holds a test cluster of its own (two lanes, never two tests on one cluster); no doctest case
# is skipped with doctest::skip (it drops the case from CTest's list unseen); lib.sh's wait_until fails loudly at
# its limit, naming what it waited for; a test whose part could not run ends skipped (77) with the reason, never
# passed; and scripts/skips.py, which scripts/test.sh runs after CTest, lists the skips of a real CTest run's JUnit
# file with their reasons and fails on one that tests/skips-allowed.txt does not allow on this machine.
source "$(dirname "$0")/lib.sh"
need_cmd ctest cmake python3

# 1. Every test has a TIMEOUT.
ctest --test-dir "$HPCLAUNCH_BUILD_DIR" --show-only=json-v1 >"$test_tmp/tests.json" ||
  fail "ctest --show-only=json-v1 failed in $HPCLAUNCH_BUILD_DIR"
untimed=$(python3 -c '
import json, sys
tests = json.load(open(sys.argv[1]))["tests"]
print(len(tests))
for t in tests:
    if not any(p["name"] == "TIMEOUT" and float(p["value"]) > 0 for p in t.get("properties", [])):
        print(t["name"])' "$test_tmp/tests.json")
[ "$(head -n 1 <<<"$untimed")" -gt 100 ] || fail "only $(head -n 1 <<<"$untimed") tests listed in $HPCLAUNCH_BUILD_DIR"
assert_eq "" "$(tail -n +2 <<<"$untimed")" "tests without a TIMEOUT"

# 1b. Each *-slurm-* test holds a Slurm test cluster of its own while it runs (two clusters, two lanes:
#     tests/CMakeLists.txt): one slot of resource `slurm`, which the spec file gives as many slots as clusters,
#     each started by the fixture in the folder lib.sh then takes for it; a NAME@24.11 test the lock of the 24.11
#     cluster (its netns one for a *-netns-* script) started by its fixture, whose folder it is given, with the
#     version lib.sh checks the cluster runs.
lanes=$(python3 -c '
import json, sys
tests = json.load(open(sys.argv[1]))["tests"]
for t in tests:
    props = {p["name"]: p["value"] for p in t.get("properties", [])}
    if t["name"].endswith("@24.11"):
        env = props.get("ENVIRONMENT", [])
        netns = "-netns-" in t["name"]
        fixture, var, folder = (("slurm_netns2411", "HPCLAUNCH_NETNS_CLUSTER_DIR=", "/test-cluster-netns-2411") if netns
                                else ("slurm2411", "HPCLAUNCH_CLUSTER_DIR=", "/test-cluster-2411"))
        if (props.get("RESOURCE_LOCK") != [fixture] or props.get("FIXTURES_REQUIRED") != [fixture]
                or not any(e.startswith(var) and e.endswith(folder) for e in env)
                or "HPCLAUNCH_SLURM_VERSION=24.11" not in env):
            print(t["name"], "holds not the 24.11 cluster alone")
        continue
    if "-slurm-" not in t["name"]:
        continue
    groups = props.get("RESOURCE_GROUPS", [])
    if groups != [{"requirements": [{".type": "slurm", "slots": 1}]}]:
        print(t["name"], "holds", groups or "no cluster")' "$test_tmp/tests.json")
assert_eq "" "$lanes" "Slurm tests without one slot of a Slurm test cluster"
spec=$(python3 -c 'import json, sys; print(" ".join(r["id"] for r in json.load(open(sys.argv[1]))["local"][0]["slurm"]))' \
  "$HPCLAUNCH_BUILD_DIR/ctest-resources.json")
[ "$(wc -w <<<"$spec")" -ge 2 ] || fail "ctest-resources.json names $(wc -w <<<"$spec") Slurm cluster(s): $spec"
for id in $spec; do
  dir=$(CTEST_RESOURCE_GROUP_0_SLURM="id:$id,slots:1" bash -c 'source "$1"; echo "$HPCLAUNCH_CLUSTER_DIR"' _ \
    "$HPCLAUNCH_SOURCE_DIR/tests/integration/lib.sh")
  started=$(python3 -c '
import json, sys
for t in json.load(open(sys.argv[1]))["tests"]:
    if t["name"] == "slurm_cluster_start_" + sys.argv[2]:
        print(" ".join(t["command"][-2:]))' "$test_tmp/tests.json" "$id")
  assert_eq "start $dir" "$started" "what slurm_cluster_start_$id does"
done
note "ok: every Slurm test holds one of the clusters $spec, each started where lib.sh looks for it"

# 2. No doctest::skip: a case that cannot run prints `SKIP: reason` and CTest reports it.
hidden=$(grep -rnE 'doctest::skip *\(' "$HPCLAUNCH_SOURCE_DIR/tests" --include='*.cc' --include='*.h' || true)
assert_eq "" "$hidden" "doctest::skip in the tests (print 'SKIP: reason' and return instead)"

# 3. wait_until, in scripts of their own (it ends the script that calls it).
lib=$HPCLAUNCH_SOURCE_DIR/tests/integration/lib.sh
run_script() {  # NAME BODY: runs BODY after lib.sh as test NAME; its exit status, then its output
  local rc=0 out
  printf 'source %q\n%s\n' "$lib" "$2" >"$test_tmp/$1.sh"
  out=$(bash "$test_tmp/$1.sh" 2>&1) || rc=$?
  printf '%s\n%s' "$rc" "$out"
}
out=$(run_script holds 'n=0; wait_until 30 "n to reach 3" '\''n=$((n + 1)); [ $n -ge 3 ]'\''; echo "n=$n"')
assert_eq "0
n=3" "$out" "wait_until on a condition that holds at the third try (what it set stays set)"
out=$(run_script never 'wait_until --on-timeout "echo cancelled" 1 "the moon" '\''echo "not yet"; false'\''; echo after')
assert_eq 1 "$(head -n 1 <<<"$out")" "exit status of a wait past its limit"
assert_contains "$out" "cancelled" "--on-timeout ran"
assert_contains "$out" "FAIL never: waited 1 s for the moon; the last check (echo \"not yet\"; false) printed: not yet"
assert_not_contains "$out" "after" "what follows a failed wait"
out=$(run_script inner 'wait_until 30 "a check that fails the test" '\''fail "told inside the check"'\')
assert_contains "$out" "FAIL inner: told inside the check" "a fail inside the condition, shown"
out=$(run_script badlimit 'wait_until 1.5 "x" true')
assert_contains "$out" "wait_until: the limit '1.5' is not whole seconds"

# 4. skip_part: the rest runs and asserts; a pass becomes a skip with the reason, a failure stays a failure.
out=$(run_script partskip 'skip_part "no allreduce tool"; echo "the rest ran"')
assert_eq 77 "$(head -n 1 <<<"$out")" "exit status of a test that passed with a part skipped"
assert_contains "$out" "the rest ran"
assert_contains "$out" "SKIP partskip: no allreduce tool (the rest passed)"
out=$(run_script partfail 'skip_part "no allreduce tool"; fail "the rest failed"')
assert_eq 1 "$(head -n 1 <<<"$out")" "exit status of a test that failed with a part skipped"

# 5. skips.py on the JUnit file of a real CTest run: a test exiting 77 after its SKIP line (SKIP_RETURN_CODE), a
#    doctest-like case printing `SKIP: ` (SKIP_REGULAR_EXPRESSION), a test that never ran (its fixture failed), a
#    disabled one. The machine's conditions are real: a build folder without hpclaunch-train is "no-libtorch".
junit() {  # TESTS: the JUnit file of a CTest run of a project with these add_test lines
  mkdir -p "$test_tmp/proj"
  printf 'cmake_minimum_required(VERSION 3.20)\nproject(skips NONE)\nenable_testing()\n%s\n' "$1" \
    >"$test_tmp/proj/CMakeLists.txt"
  cmake -S "$test_tmp/proj" -B "$test_tmp/proj/build" >/dev/null || fail "configure of the CTest project failed"
  rm -f "$test_tmp/junit.xml"
  ctest --test-dir "$test_tmp/proj/build" --output-junit "$test_tmp/junit.xml" >/dev/null 2>&1 || true
  assert_file "$test_tmp/junit.xml"
}
skips() {  # ALLOWED BUILD_DIR: skips.py's exit status, then its output
  local rc=0 out
  out=$(python3 "$HPCLAUNCH_SOURCE_DIR/scripts/skips.py" "$test_tmp/junit.xml" "$1" "$2" 2>&1) || rc=$?
  printf '%s\n%s' "$rc" "$out"
}
allowed=$HPCLAUNCH_SOURCE_DIR/tests/skips-allowed.txt
no_torch=$test_tmp/no-libtorch-build
mkdir -p "$no_torch"
skip77='add_test(NAME t0140-slurm-allreduce COMMAND sh -c "echo SKIP t0140-slurm-allreduce: no tool >&2; exit 77")
set_tests_properties(t0140-slurm-allreduce PROPERTIES SKIP_RETURN_CODE 77)
add_test(NAME passes COMMAND true)'
junit "$skip77"
out=$(skips "$allowed" "$no_torch")
assert_eq 0 "$(head -n 1 <<<"$out")" "status for a skip allowed without LibTorch, without it ($out)"
assert_contains "$out" "skips: 1 test(s) skipped"
assert_contains "$out" "t0140-slurm-allreduce: no tool [allowed here]"
if [ -x "$HPCLAUNCH_BUILD_DIR/trainer/hpclaunch-train" ]; then
  out=$(skips "$allowed" "$HPCLAUNCH_BUILD_DIR")
  assert_eq 1 "$(head -n 1 <<<"$out")" "status for a skip allowed without LibTorch, with it ($out)"
  assert_contains "$out" "t0140-slurm-allreduce: no tool [NOT ALLOWED here: $allowed allows it only on: no-libtorch]"
  assert_contains "$out" "skips: 1 skip(s) not allowed on this machine"
fi
junit 'add_test(NAME "a doctest case" COMMAND sh -c "echo [doctest] x; echo SKIP: no gloo here")
set_tests_properties("a doctest case" PROPERTIES SKIP_REGULAR_EXPRESSION "SKIP: ")
add_test(NAME setup COMMAND false)
add_test(NAME needs-setup COMMAND true)
set_tests_properties(setup PROPERTIES FIXTURES_SETUP fx)
set_tests_properties(needs-setup PROPERTIES FIXTURES_REQUIRED fx)
add_test(NAME off COMMAND true)
set_tests_properties(off PROPERTIES DISABLED ON)'
out=$(skips "$allowed" "$no_torch")
assert_eq 1 "$(head -n 1 <<<"$out")" "status with skips the allow-list does not name ($out)"
assert_contains "$out" "skips: 3 test(s) skipped"
assert_contains "$out" "a doctest case: no gloo here [NOT ALLOWED: not in $allowed]"
assert_contains "$out" "needs-setup: Fixture dependency failed [NOT ALLOWED: not in $allowed]"
assert_contains "$out" "off: disabled (its DISABLED property) [NOT ALLOWED: not in $allowed]"
printf 'a doctest case | no-libtorch | why\nneeds-* | no-libtorch | why\noff | no-libtorch | why\n' >"$test_tmp/all.txt"
assert_eq 0 "$(skips "$test_tmp/all.txt" "$no_torch" | head -n 1)" "status with every skip allowed"
junit 'add_test(NAME passes COMMAND true)'
assert_eq "0
skips: no test was skipped" "$(skips "$allowed" "$HPCLAUNCH_BUILD_DIR")" "a run without skips"

# 6. The allow-list itself reads, and a bad line is one clear error naming file:line.
printf '# c\n\nt0100-x | on-mars | why\n' >"$test_tmp/bad.txt"
out=$(skips "$test_tmp/bad.txt" "$HPCLAUNCH_BUILD_DIR")
assert_eq 2 "$(head -n 1 <<<"$out")" "status for a bad allow-list"
assert_contains "$out" "$test_tmp/bad.txt:3: unknown condition 'on-mars'; one of: no-root, no-libtorch, no-gloo, one-cpu"
printf 't0100-x no-root why\n' >"$test_tmp/bad.txt"
out=$(skips "$test_tmp/bad.txt" "$HPCLAUNCH_BUILD_DIR")
assert_contains "$out" "$test_tmp/bad.txt:1: expected 'TEST | CONDITION | REASON'"
echo ok
