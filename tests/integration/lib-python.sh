# Sourced (after lib.sh) by the t08*-python-* scripts: runs pytest files of python/tests/ with the package from the
# source tree, under Debian's /usr/bin/python3 (python3-pytest, python3-cloudpickle, python3-torch; the python3 first
# on PATH may be another without them), or the Python in $pytest_python (the peers' venv: `pytest_python=$(peer_python)`).

# run_pytest FILE... [-- PYTEST_ARG...]: fails the test when pytest fails, and when it collected no test (exit 5),
# which would otherwise pass silently; a test pytest skipped makes the whole test a skip (exit 77) naming why, since
# part of it did not run.
run_pytest() {
  local py=${pytest_python:-/usr/bin/python3} rc=0
  [ -x "$py" ] || fail "$py not found; run scripts/install-deps.sh"
  "$py" -c 'import pytest, cloudpickle' 2>/dev/null || fail "$py lacks pytest or cloudpickle; run scripts/install-deps.sh"
  local files=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do files+=("$HPCLAUNCH_SOURCE_DIR/python/tests/$1"); shift; done
  [ "${1:-}" != -- ] || shift
  local out=$test_tmp/pytest.out
  (cd "$test_tmp" && PYTHONDONTWRITEBYTECODE=1 "$py" -m pytest -p no:cacheprovider -q -rs --basetemp "$test_tmp/pytest" \
    "${files[@]}" "$@") 2>&1 | tee "$out" || rc=${PIPESTATUS[0]}
  [ $rc -ne 5 ] || fail "pytest collected no test from ${files[*]}"
  [ $rc -eq 0 ] || fail "pytest exited $rc (above)"
  local skipped
  skipped=$(grep '^SKIPPED ' "$out" || true)
  [ -z "$skipped" ] || skip "pytest skipped part of it: $(echo "$skipped" | tr '\n' ';')"
}
