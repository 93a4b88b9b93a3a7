#!/usr/bin/env bash
# The Python Executor on the real Slurm test cluster: a gloo all_reduce over 2 nodes, an exception brought back
# with its rank and node, a cancelled job's result() raising, and map_array over 4 items with max_concurrent=2
# as one array job whose results come back in order, and Job.wait's tqdm bar of a job's steps.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-python.sh"
need_hpclaunch
need_cluster
run_pytest test_slurm.py
echo "ok"
