// Asking a job's scheduler again and again, for `wait` and `logs --follow`. A scheduler that answered once may
// hiccup or be restarted (slurmctld recovering its state can take minutes on a large site), so failed looks are
// tolerated for k_tolerated_silence since the last answer, and at least k_tolerated_failures of them in a row;
// one that never answered, or stays silent longer, is the scheduler's error.
#pragma once
#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "record/job_record.h"
#include "scheduler/backend.h"

namespace hpclaunch {

// How long to wait before asking the scheduler again: `interval` after a look that saw the state change, doubling
// after each look that did not, up to k_factor times `interval`. A long job is then asked a quarter as often as a
// changing one; its end is seen at most k_factor intervals late. Pure.
class PollBackoff {
 public:
  static constexpr double k_factor = 4;
  explicit PollBackoff(double interval) : m_interval(interval), m_delay(interval) {}
  // The delay (seconds) before the next look, told whether the last look saw a change.
  double next(bool changed) {
    m_delay = changed ? m_interval : std::min(m_delay * 2, m_interval * k_factor);
    return m_delay;
  }

 private:
  double m_interval;
  double m_delay;
};

class StateWatch {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr int k_tolerated_failures = 5;
  static constexpr std::chrono::seconds k_tolerated_silence{600};
  StateWatch(JobRecord job, CommandRunner run, std::function<Clock::time_point()> now = Clock::now)
      : m_job(std::move(job)), m_run(std::move(run)), m_now(std::move(now)) {}

  // The job's state now; nullopt when this look failed but is tolerated. Throws the backend's Error when the
  // scheduler has never answered, or has been silent past both limits.
  std::optional<JobState> look();
  // Told once when the scheduler stops answering (and what it said) and once when it answers again.
  void on_note(std::function<void(const std::string&)> note) { m_note = std::move(note); }
  int failures() const { return m_failures; }
  const std::string& last_error() const { return m_last_error; }

 private:
  JobRecord m_job;
  CommandRunner m_run;
  std::function<Clock::time_point()> m_now;
  std::function<void(const std::string&)> m_note;
  bool m_answered = false;
  Clock::time_point m_last_answer{};
  int m_failures = 0;
  std::string m_last_error;
};

}  // namespace hpclaunch
