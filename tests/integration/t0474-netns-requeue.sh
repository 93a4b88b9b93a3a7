#!/usr/bin/env bash
# t0295 on the netns cluster: a requeueing 2-node agent job loses the agent on n2, which is another host; the
# node-0 agent names n2 in failure.json, `hpclaunch exclude --from-failure --requeue` requeues the job with n2
# in its ExcNodeList.
source "$(dirname "$0")/lib.sh"
run_on_netns_cluster t0295-slurm-requeue-lost-node.sh
