#include "jobs/watch.h"

#include <fmt/core.h>

#include "util/error.h"

namespace hpclaunch {

std::optional<JobState> StateWatch::look() {
  try {
    JobState state = backend_for(m_job.scheduler).query(m_job, m_run);
    if (m_failures > 0 && m_note) m_note("the scheduler answers again");
    m_answered = true;
    m_last_answer = m_now();
    m_failures = 0;
    return state;
  } catch (const Error& e) {
    if (!m_answered) throw;
    ++m_failures;
    m_last_error = e.what();
    if (m_failures >= k_tolerated_failures && m_now() - m_last_answer >= k_tolerated_silence) throw;
    if (m_failures == 1 && m_note)
      m_note(fmt::format("the scheduler did not answer ({}); asking again for up to {} s", e.what(),
                         k_tolerated_silence.count()));
    return std::nullopt;
  }
}

}  // namespace hpclaunch
