// The Flux backend: runs flux batch, flux jobs (one query for every job asked about), flux cancel and flux job kill;
// what they say and answer is Flux's dialect (schedulers/flux/dialect.h). No test-only check (flux batch --dry-run
// prints a summary, not the scheduler's verdict) and no survey.
#pragma once
#include <string>
#include <vector>

#include "schedulers/flux/dialect.h"
#include "scheduler/backend.h"

namespace hpclaunch {

class FluxBackend final : public SchedulerBackend {
 public:
  Scheduler kind() const override { return Scheduler::flux; }
  std::string submit(const std::string& script, const std::vector<std::string>& options,
                     const CommandRunner& run) const override;
  JobState query(const JobRecord& job, const CommandRunner& run) const override;
  std::vector<JobState> query_tasks(const JobRecord& array, const CommandRunner& run) const override;
  std::vector<JobAnswer> query_many(const std::vector<JobRecord>& jobs, const CommandRunner& run) const override;
  void cancel(const JobRecord& job, const CommandRunner& run) const override;
  void send_signal(const JobRecord& job, int number) const override;  // flux_signal with the real commands
  std::vector<std::string> output_files(const JobRecord& job) const override;
};

// `cancel --signal`: `flux job kill --signal=N ID...`, which reaches the batch script and every job running in it
// (flux-core doc/man1/common/job-other-options.rst, --signal). Throws Error naming the command when it fails.
void flux_signal(const JobRecord& job, int number, const CommandRunner& run);

}  // namespace hpclaunch
