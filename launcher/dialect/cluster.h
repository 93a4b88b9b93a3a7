// What a live scheduler says about its cluster, as its dialect reads it: partitions or queues with their limits,
// nodes with their CPUs, memory, GPUs (typed GRES) and features, and the user's accounts and QOS when accounting
// answers. Filled by each backend's survey (scheduler/backend.h) from its dialect's parsers (dialect/slurm.h,
// pbs.h); compared with a profile by `sites check` and turned into one by `sites learn` (survey/).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "site/profile.h"

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

// A block of Slurm's block topology (`scontrol show topology` under topology/block: an NVL72 rack, a scalable unit).
struct BlockInfo {
  std::string name;
  std::vector<std::string> nodes;
  int block_size = 0;  // the planning block size: the nodes a segment may hold at most
};

struct ClusterInfo {
  Scheduler scheduler = Scheduler::slurm;
  std::string version;              // the scheduler's release ("24.11.5"; `sinfo --version`); "" unknown
  std::vector<BlockInfo> blocks;    // block topology; none under another topology or none
  std::vector<PartitionInfo> partitions;  // PBS: its execution queues
  std::vector<NodeInfo> nodes;
  std::optional<std::vector<std::string>> accounts;  // nullopt: accounting did not answer
  std::optional<std::vector<std::string>> qos;
  std::vector<std::string> commands;  // what was run, for the record

  const PartitionInfo* find_partition(const std::string& name) const;
  // The version as far as its release ("24.11" of "24.11.5"), as a profile's scheduler_version spells it.
  std::string release() const;
  // The nodes of `partition` (all nodes when it lists none, as a PBS queue).
  std::vector<const NodeInfo*> nodes_of(const PartitionInfo& partition) const;
};

}  // namespace hpclaunch
