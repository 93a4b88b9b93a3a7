#!/usr/bin/env bash
# submitit 1.5.4 as the peer of our Executor (docs/python.md, "Moving a submitit script over"), under the peers'
# venv (submitit and torch 2.15 from PyPI): every public name of submitit, walked from the installed package, is
# ours or listed in docs/python.md as not supported with why; a value, an exception, a 2x2 gloo all_reduce and
# map_array come back the same through submitit's LocalExecutor and our Executor on the local site.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-python.sh"
need_hpclaunch
pytest_python=$(peer_python)
"$pytest_python" -c 'import submitit, torch' || fail "the peers' venv lacks submitit or torch; run scripts/peers-venv.sh"
run_pytest test_submitit_peer.py
echo "ok"
