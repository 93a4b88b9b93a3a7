// The local site's backend: no scheduler; the job runs here, in the foreground or detached (backend_job.cc),
// and its state is JOBDIR/state.json.
#pragma once
#include <string>
#include <string_view>

#include "scheduler/backend.h"

namespace hpclaunch {

class LocalBackend final : public SchedulerBackend {
 public:
  Scheduler kind() const override { return Scheduler::local; }
  std::string submit(const std::string& script, const std::vector<std::string>& options,
                     const CommandRunner& run) const override;
  std::optional<int> run_in_foreground(const std::string& script, const std::string& job_dir,
                                       const std::string& job_id) const override;
  void start_detached(const std::string& script, const std::string& job_dir, const std::string& job_id) const override;
  JobState query(const JobRecord& job, const CommandRunner& run) const override;
  // Its state is JOBDIR/state.json and a pid: cheap to read, so asked every 0.25 s (at most 1 s while unchanged).
  double poll_interval() const override { return 0.25; }
  void cancel(const JobRecord& job, const CommandRunner& run) const override;
  void send_signal(const JobRecord& job, int number) const override;
  std::vector<std::string> output_files(const JobRecord& job) const override;
};

// JOBDIR/state.json of a local job (record/job_record.h's LocalStateFile, the one type it is read as). Throws
// Error naming `path` when the text is not one.
LocalStateFile parse_local_state_file(std::string_view json, const std::string& path);
// The job's state from its state file; `alive` says whether its recorded pid still runs.
JobState local_job_state(const LocalStateFile& file, bool alive, const std::string& path);
// Both: the state of a state.json's text.
JobState parse_local_state(std::string_view json, bool alive, const std::string& path);

}  // namespace hpclaunch
