#!/usr/bin/env bash
# The wheel's setup.py, in seconds: every wheel brings the static build up to date (a new commit must not ship
# the old binary) and shows its progress, with a fake `cmake` standing in for the ~10 CPU-minute static build
# (t0810 packs the real one); a Python without `wheel` gets one line saying what it needs.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-python.sh"
need_cmd git
/usr/bin/python3 -c 'import setuptools, wheel, pip' 2>/dev/null ||
  fail "python3-setuptools, python3-wheel or python3-pip missing; run scripts/install-deps.sh"
run_pytest test_setup.py
echo "ok"
