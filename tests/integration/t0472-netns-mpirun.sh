#!/usr/bin/env bash
# t0125 on the netns cluster: mpirun direct launch in a 2-node job. Open MPI starts its daemon on
# n2 with srun, the daemon connects back to mpirun on n1 over the link, and the 4 ranks form one gloo group.
source "$(dirname "$0")/lib.sh"
need_cmd mpirun
run_on_netns_cluster t0125-slurm-mpirun.sh
