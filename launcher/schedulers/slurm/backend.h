// The Slurm backend: runs sbatch, squeue, scontrol, scancel, sbatch --test-only, sacctmgr; what they say and
// answer is Slurm's dialect (schedulers/slurm/dialect.h).
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "schedulers/slurm/dialect.h"
#include "scheduler/backend.h"

namespace hpclaunch {

class SlurmBackend final : public SchedulerBackend {
 public:
  Scheduler kind() const override { return Scheduler::slurm; }
  std::string submit(const std::string& script, const std::vector<std::string>& options,
                     const CommandRunner& run) const override;
  JobState query(const JobRecord& job, const CommandRunner& run) const override;
  std::vector<JobState> query_tasks(const JobRecord& array, const CommandRunner& run) const override;
  std::vector<JobAnswer> query_many(const std::vector<JobRecord>& jobs, const CommandRunner& run) const override;
  void cancel(const JobRecord& job, const CommandRunner& run) const override;
  // One sacct for all the jobs' allocations and steps (parse_sacct_usage); without accounting, each job's note
  // quotes what sacct says.
  std::vector<JobUsage> usage(const std::vector<JobRecord>& jobs, const CommandRunner& run) const override;
  std::vector<std::string> output_files(const JobRecord& job) const override;
  std::optional<TestVerdict> test_only(const std::string& script, const std::vector<std::string>& options,
                                      const CommandRunner& run) const override;
  ClusterInfo survey(const std::string& user, const CommandRunner& run) const override;
  void requeue_excluding(const std::string& job_id, const std::vector<std::string>& exclude,
                         const CommandRunner& run) const override;
};

}  // namespace hpclaunch
