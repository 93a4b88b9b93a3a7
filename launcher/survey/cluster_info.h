// What a live scheduler says about its cluster: partitions or queues with their limits, nodes with their CPUs,
// memory, GPUs (typed GRES) and features, and the user's accounts and QOS when accounting answers. Read by
// `hpclaunch sites check` (compare with a profile) and `sites learn` (write a profile). The parsers are pure;
// survey_cluster runs the commands through an injected CommandRunner.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/backend.h"

namespace hpclaunch {

struct PartitionInfo {
  std::string name;
  bool is_default = false;
  long max_time_s = 0;  // 0: unlimited
  int max_nodes = 0;    // 0: unlimited
  std::vector<std::string> nodes;
};

struct GresInfo {
  std::string name;  // "gpu"
  std::string type;  // "a100", or "" when untyped
  int count = 0;
};

struct NodeInfo {
  std::string name;
  std::string arch;
  int cpus = 0;  // logical CPUs
  int sockets = 0;
  int cores_per_socket = 0;
  int threads_per_core = 1;
  long memory_mb = 0;
  std::vector<GresInfo> gres;
  std::vector<std::string> features;
  int cores() const { return sockets * cores_per_socket; }
  int gpus() const;  // the count of GRES named "gpu"
};

struct ClusterInfo {
  Scheduler scheduler = Scheduler::slurm;
  std::vector<PartitionInfo> partitions;  // PBS: its execution queues
  std::vector<NodeInfo> nodes;
  std::optional<std::vector<std::string>> accounts;  // nullopt: accounting did not answer
  std::optional<std::vector<std::string>> qos;
  std::vector<std::string> commands;  // what was run, for the record

  const PartitionInfo* find_partition(const std::string& name) const;
  // The nodes of `partition` (all nodes when it lists none, as a PBS queue).
  std::vector<const NodeInfo*> nodes_of(const PartitionInfo& partition) const;
};

// `scontrol show partition -o`: one partition per line.
std::vector<PartitionInfo> parse_scontrol_partitions(std::string_view out);
// `scontrol show node -o`: one node per line.
std::vector<NodeInfo> parse_scontrol_nodes(std::string_view out);
// `sacctmgr -n -P show assoc user=U format=Account,QOS`: "acct|qos1,qos2" lines -> accounts and QOS, sorted.
void parse_sacctmgr_assoc(std::string_view out, std::vector<std::string>* accounts, std::vector<std::string>* qos);
// `pbsnodes -av`: blocks headed by the node name, `resources_available.ncpus = 64` lines.
std::vector<NodeInfo> parse_pbsnodes(std::string_view out);
// `qstat -Qf`: blocks `Queue: NAME` with `queue_type`, `resources_max.walltime`, `resources_max.nodect`;
// execution queues only.
std::vector<PartitionInfo> parse_qstat_queues(std::string_view out);

// Asks the scheduler (Slurm: scontrol, sacctmgr; PBS: qstat -Qf, pbsnodes -av). A command that cannot run throws
// Error naming it; accounting that does not answer leaves accounts/qos unset.
ClusterInfo survey_cluster(Scheduler scheduler, const std::string& user, const CommandRunner& run);

}  // namespace hpclaunch
