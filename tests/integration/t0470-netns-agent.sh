#!/usr/bin/env bash
# t0430 on the netns cluster: `srun --ntasks-per-node=1 hpclaunch agent` over 2 nodes that are different hosts
# (own network namespace, address and host name each). The node-0 agent's store is bound to n1's address, the
# agent on n2 reaches it over the link, and the 4 workers' gloo allreduce crosses it; a scancel-ed job leaves
# nothing on either node.
source "$(dirname "$0")/lib.sh"
run_on_netns_cluster t0430-slurm-agent.sh
