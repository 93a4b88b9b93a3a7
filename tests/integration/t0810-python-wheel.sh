#!/usr/bin/env bash
# The wheel (docs/python.md): built offline from a clean copy of python/ with Debian's setuptools and wheel around
# the static hpclaunch, installed into a fresh venv with no network; `hpclaunch --version`, `import hpclaunch` and
# `python -m hpclaunch` work there. The static binary is t0720's build (BUILD-static; CTest runs this after it: an
# incremental build, seconds), not a second one.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-static.sh"
source "$(dirname "$0")/lib-python.sh"
need_cmd cmake git
/usr/bin/python3 -c 'import setuptools, wheel, venv, ensurepip' 2>/dev/null ||
  fail "python3-setuptools, python3-wheel or python3-venv missing; run scripts/install-deps.sh"
build=$HPCLAUNCH_BUILD_DIR-static
static_build "$build"
HPCLAUNCH_BINARY=$build/launcher/hpclaunch run_pytest test_wheel.py
echo "ok"
