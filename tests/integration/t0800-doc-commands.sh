#!/usr/bin/env bash
# Every command line README.md and docs/*.md show a user (docs/command-lines.md: fenced sh/console blocks, and
# inline spans that are whole command lines) is run here, taken from the document, or marked there: `# run by
# tNNNN` (that test takes it from the document and runs it) or `# not runnable here: WHY`. Each unmarked line runs
# as written with bash in a sandbox: a scratch working directory holding links to the tree's top-level entries
# (examples/, scripts/, ...), HOME, XDG directories and TMPDIR of its own, a clean environment, and PATH with the
# built hpclaunch (and hpclaunch-train) first, then the system's directories. A `hpclaunch submit` for a site
# other than `local` runs with --dry-run (everything but the scheduler call: no site's scheduler is reachable
# here). A line that fails, and a fenced block without a tag, fail the test with FILE:LINE. The `local` sweep of
# docs/sweeps.md trains three short runs: about 40 s of the test's time.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
source "$HPCLAUNCH_SOURCE_DIR/tests/integration/lib-doc.sh"

check_documents() {  # ROOT: every command line of ROOT's README.md and docs/*.md; what failed into failures[]
  local root=$1 list where mark cmd t f run rc
  failures=() ran=0 marked=0 by_tests=0
  list=$(python3 "$tool" "$root" 2>"$test_tmp/mistakes") || true
  while IFS= read -r m; do failures+=("$m"); done <"$test_tmp/mistakes"
  while IFS=$'\t' read -r where mark cmd; do
    case $mark in
      not-runnable) marked=$((marked + 1)) ;;
      run-by\ *)
        t=${mark#run-by }
        f=$(ls "$src/tests/integration/$t"-*.sh 2>/dev/null | head -1)
        if [ -z "$f" ]; then
          failures+=("$where: marked 'run by $t', but there is no tests/integration/$t-*.sh")
        elif ! grep -q "doc_commands.py.*--run-by $t" "$f"; then
          failures+=("$where: marked 'run by $t', but $(basename "$f") does not take it from the document (doc_commands.py --run-by $t)")
        fi
        by_tests=$((by_tests + 1)) ;;
      run)
        run=$(dry_run_remote "$cmd")
        rc=0
        run_in_box "$run" || rc=$?
        ran=$((ran + 1))
        if [ $rc -ne 0 ]; then
          failures+=("$where: exit $rc: $run
$(tail -5 "$test_tmp/out" | sed 's/^/    /')
  (fix the document or the code, or mark the line '# not runnable here: WHY', docs/command-lines.md)")
        fi ;;
    esac
  done < <(echo "$list" | grep . || true)
}

# The harness can fail: a document with an unmarked line that fails, a line marked for a test that does not take
# it, and an untagged block is reported with its file and line; a marked line and a synopsis are not.
fake=$test_tmp/fake
mkdir -p "$fake/docs"
printf '# x\n\n```sh\nfalse --not-a-real-command\nhpclaunch sites  # not runnable here: a reason\n```\n' >"$fake/README.md"
printf 'Run `hpclaunch render --site local -- true` (`hpclaunch status JOB`, `cmake --install b --prefix ~/x`<!-- run by t0700 -->).\n\n```\nout\n```\n' \
  >"$fake/docs/a.md"
check_documents "$fake"
assert_eq "2 1 1 3" "$ran $marked $by_tests ${#failures[@]}" "lines run, marked, run by tests, and failures of the example"
all=$(printf '%s\n' "${failures[@]}")
assert_contains "$all" "README.md:4: exit 1: false --not-a-real-command"
assert_contains "$all" "docs/a.md:1: marked 'run by t0700', but t0700-install-tree.sh does not take it"
assert_contains "$all" "docs/a.md:3: a fenced block without a tag"

check_documents "$src"
note "$ran command lines run, $by_tests run by other tests, $marked marked not runnable here"
[ $((ran + by_tests + marked)) -ge 40 ] || fail "too few command lines found in README and docs/ (the rule broke?)"
if [ ${#failures[@]} -gt 0 ]; then
  fail "command lines in README/docs that do not run as written, or are marked wrongly:
$(printf '%s\n' "${failures[@]}")"
fi
echo "ok"
