// What a live scheduler says about its cluster (dialect/cluster.h's ClusterInfo: partitions or queues with their
// limits, nodes, the user's accounts and QOS), for `hpclaunch sites check` (compare with a profile) and `sites
// learn` (write a profile). The parsers are the schedulers' dialects' (schedulers/slurm/dialect.h, schedulers/pbs/dialect.h); the
// commands run in each backend's survey (scheduler/backend.h).
#pragma once
#include <string>

#include "dialect/cluster.h"
#include "schedulers/pbs/dialect.h"
#include "schedulers/slurm/dialect.h"
#include "scheduler/backend.h"

namespace hpclaunch {

// Asks the scheduler (Slurm: scontrol, sacctmgr; PBS: qstat -Qf, pbsnodes -av) through its backend's survey. A
// command that cannot run throws Error naming it; accounting that does not answer leaves accounts/qos unset.
ClusterInfo survey_cluster(Scheduler scheduler, const std::string& user, const CommandRunner& run);

}  // namespace hpclaunch
