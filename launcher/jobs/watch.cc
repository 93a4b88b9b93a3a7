#include "jobs/watch.h"

#include "util/error.h"

namespace hpclaunch {

std::optional<JobState> StateWatch::look() {
  try {
    JobState state = backend_for(m_job.scheduler).query(m_job, m_run);
    m_answered = true;
    m_failures = 0;
    return state;
  } catch (const Error&) {
    if (!m_answered || ++m_failures >= k_tolerated_failures) throw;
    return std::nullopt;
  }
}

}  // namespace hpclaunch
