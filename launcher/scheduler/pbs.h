// The PBS Pro / OpenPBS backend: qsub, qstat -f (and -x -f for finished jobs), qdel. Its parsers are pure.
#pragma once
#include <optional>
#include <string>
#include <string_view>

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
  std::vector<std::string> array_options(int count, int max_concurrent) const override;
  std::vector<std::string> dependency_options(const std::vector<Dependency>& after) const override;
};

// The job id in qsub's answer ("123.server", "123[].server"). Throws Error quoting qsub when it failed.
std::string parse_qsub_answer(const ProcessResult& answer);
// `qstat -f ID` / `qstat -x -f ID` (PBS Pro/OpenPBS/Torque): job_state = Q|R|E|H|W|F|..., Exit_status.
std::optional<JobState> parse_qstat_full(std::string_view out);
// True if a failed qstat/qdel says the job id is unknown to it (forgotten, or finished without history).
bool pbs_unknown_job(const ProcessResult& r);

}  // namespace hpclaunch
