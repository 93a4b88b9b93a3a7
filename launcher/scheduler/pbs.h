// The PBS Pro / OpenPBS backend: runs qsub, qstat -f (and -x -f for finished jobs), qdel, qstat -Qf, pbsnodes;
// what they say and answer is PBS's dialect (dialect/pbs.h).
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "dialect/pbs.h"
#include "scheduler/backend.h"

namespace hpclaunch {

class PbsBackend final : public SchedulerBackend {
 public:
  Scheduler kind() const override { return Scheduler::pbs; }
  std::string submit(const std::string& script, const std::vector<std::string>& options,
                     const CommandRunner& run) const override;
  JobState query(const JobRecord& job, const CommandRunner& run) const override;
  void cancel(const JobRecord& job, const CommandRunner& run) const override;
  std::vector<std::string> output_files(const JobRecord& job) const override;
  ClusterInfo survey(const std::string& user, const CommandRunner& run) const override;
};

}  // namespace hpclaunch
