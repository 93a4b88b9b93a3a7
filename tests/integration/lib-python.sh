# Sourced (after lib.sh) by the t08*-python-* scripts: runs pytest files of python/tests/ under Debian's
# /usr/bin/python3 (python3-pytest, python3-cloudpickle, python3-torch; the python3 first on PATH may be another
# without them), with the package from the source tree.

# run_pytest FILE... [-- PYTEST_ARG...]: fails the test when pytest fails, and when it collected no test (exit 5),
# which would otherwise pass silently.
run_pytest() {
  local py=/usr/bin/python3 rc=0
  [ -x "$py" ] || fail "$py not found; run scripts/install-deps.sh"
  "$py" -c 'import pytest, cloudpickle' 2>/dev/null || fail "python3-pytest or python3-cloudpickle missing; run scripts/install-deps.sh"
  local files=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do files+=("$HPCLAUNCH_SOURCE_DIR/python/tests/$1"); shift; done
  [ "${1:-}" != -- ] || shift
  (cd "$test_tmp" && PYTHONDONTWRITEBYTECODE=1 "$py" -m pytest -p no:cacheprovider -q --basetemp "$test_tmp/pytest" \
    "${files[@]}" "$@") || rc=$?
  [ $rc -ne 5 ] || fail "pytest collected no test from ${files[*]}"
  [ $rc -eq 0 ] || fail "pytest exited $rc (above)"
}
