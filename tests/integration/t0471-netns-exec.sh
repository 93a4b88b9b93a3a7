#!/usr/bin/env bash
# t0140 and t0120 on the netns cluster: srun direct launch (`srun hpclaunch exec`), 2 nodes x 2 tasks on
# different hosts: MASTER_ADDR is the first node's name, resolved by every node to n1's own address, and the 4
# ranks' gloo allreduce crosses the link between the nodes.
source "$(dirname "$0")/lib.sh"
run_on_netns_cluster t0140-slurm-allreduce.sh
run_on_netns_cluster t0120-slurm-exec.sh
