#!/usr/bin/env bash
# The Python package (docs/python.md) against the real binary on the local site: submit/render/jobs/
# status/wait/logs/cancel/metrics/plot, every --json schema (docs/json.md), the CLI's messages and exit codes for
# bad keywords and values, and Executor.submit of a real gloo all_reduce (python3-torch) on 2 emulated nodes x 2
# workers (agent and srun launches), with an exception on rank 3 brought back with its traceback and rank.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-python.sh"
need_hpclaunch
run_pytest test_api.py test_executor_local.py test_notebook.py
echo "ok"
