// Asking a job's scheduler again and again, for `wait` and `logs --follow`. A scheduler that answered once may
// hiccup (slurmctld busy or restarting), so a few failed looks in a row are tolerated; one that never answered, or
// that keeps failing, is the scheduler's error.
#pragma once
#include <optional>

#include "record/job_record.h"
#include "scheduler/backend.h"

namespace hpclaunch {

class StateWatch {
 public:
  static constexpr int k_tolerated_failures = 5;
  StateWatch(JobRecord job, CommandRunner run) : m_job(std::move(job)), m_run(std::move(run)) {}

  // The job's state now; nullopt when this look failed but is tolerated. Throws the backend's Error when the
  // scheduler has never answered, or has failed k_tolerated_failures looks in a row.
  std::optional<JobState> look();

 private:
  JobRecord m_job;
  CommandRunner m_run;
  bool m_answered = false;
  int m_failures = 0;
};

}  // namespace hpclaunch
