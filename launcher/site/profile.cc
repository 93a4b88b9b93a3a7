#include "site/profile.h"

#include <algorithm>

namespace hpclaunch {

const char* to_string(MemoryStyle s) {
  switch (s) {
    case MemoryStyle::unset: return "unset";
    case MemoryStyle::whole_node: return "whole-node";
    case MemoryStyle::per_gpu: return "per-gpu";
    case MemoryStyle::by_gpu: return "by-gpu";
    case MemoryStyle::pbs_chunk: return "pbs-chunk";
  }
  return "?";
}

const char* to_string(Scheduler s) {
  switch (s) {
    case Scheduler::slurm: return "slurm";
    case Scheduler::pbs: return "pbs";
    case Scheduler::local: return "local";
  }
  return "?";
}

const char* to_string(LaunchMode m) {
  switch (m) {
    case LaunchMode::agent: return "agent";
    case LaunchMode::srun: return "srun";
    case LaunchMode::mpirun: return "mpirun";
    case LaunchMode::pals: return "pals";
  }
  return "?";
}

const char* to_string(GpuStyle s) {
  switch (s) {
    case GpuStyle::gpus_per_node: return "gpus-per-node";
    case GpuStyle::gres: return "gres";
    case GpuStyle::pbs_select: return "pbs-select";
    case GpuStyle::pbs_totals: return "pbs-totals";
    case GpuStyle::none: return "none";
  }
  return "?";
}

const char* to_string(QueueKind k) {
  switch (k) {
    case QueueKind::partition: return "partition";
    case QueueKind::qos: return "qos";
    case QueueKind::queue: return "queue";
    case QueueKind::automatic: return "auto";
  }
  return "?";
}

const char* to_string(MasterAddrSource s) {
  switch (s) {
    case MasterAddrSource::first_node: return "first-node";
    case MasterAddrSource::batch_host: return "batch-host";
    case MasterAddrSource::fixed: return "fixed";
  }
  return "?";
}

const char* to_string(GpuBind b) {
  switch (b) {
    case GpuBind::none: return "none";
    case GpuBind::local_rank: return "local-rank";
  }
  return "?";
}

bool SiteProfile::allows(LaunchMode m) const {
  return std::find(launchers.begin(), launchers.end(), m) != launchers.end();
}

const Queue* SiteProfile::find_queue(const std::string& queue_name) const {
  for (const auto& q : queues)
    if (q.name == queue_name) return &q;
  return nullptr;
}

const Queue* SiteProfile::default_queue() const {
  for (const auto& q : queues)
    if (q.is_default) return &q;
  return nullptr;
}

}  // namespace hpclaunch
