// The PBS Pro / OpenPBS backend: runs qsub, qstat -f (and -x -f for finished jobs), qdel, qstat -Qf, pbsnodes;
// what they say and answer is PBS's dialect (schedulers/pbs/dialect.h).
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "schedulers/pbs/dialect.h"
#include "scheduler/backend.h"

namespace hpclaunch {

class PbsBackend final : public SchedulerBackend {
 public:
  Scheduler kind() const override { return Scheduler::pbs; }
  std::string submit(const std::string& script, const std::vector<std::string>& options,
                     const CommandRunner& run) const override;
  JobState query(const JobRecord& job, const CommandRunner& run) const override;
  std::vector<JobState> query_tasks(const JobRecord& array, const CommandRunner& run) const override;
  std::vector<JobAnswer> query_many(const std::vector<JobRecord>& jobs, const CommandRunner& run) const override;
  void cancel(const JobRecord& job, const CommandRunner& run) const override;
  std::vector<std::string> output_files(const JobRecord& job) const override;
  ClusterInfo survey(const std::string& user, const CommandRunner& run) const override;

 private:
  // One `qstat -x -f -t ID...`: every job and subjob it lists, by pbs_id_key; nullopt when qstat has no -x (Torque).
  std::optional<std::map<std::string, JobState>> qstat_jobs(const std::vector<std::string>& ids, const CommandRunner& run) const;
  // An array's tasks in such an answer; a task it does not list has been forgotten.
  std::vector<JobState> task_states(const JobRecord& array, const std::map<std::string, JobState>& known) const;
};

}  // namespace hpclaunch
