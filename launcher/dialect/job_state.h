// A job's state in the scheduler-neutral words `jobs`, `status` and `wait` show. Each backend
// (schedulers/NAME/backend.cc) maps its scheduler's answers onto it.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace hpclaunch {

enum class Phase {
  pending,           // queued, held, waiting for resources
  running,           // running, completing, suspended
  completed,         // ended with exit 0
  failed,            // ended otherwise: non-zero exit, node failure, out of memory
  cancelled,         // cancelled by a user or an admin
  timeout,           // hit its time limit
  finished_unknown,  // the scheduler has forgotten it (MinJobAge, no history); it ran and is not running
};
const char* to_string(Phase p);

struct JobState {
  Phase phase = Phase::pending;
  std::string raw;     // the scheduler's own word: "PENDING", "R", "exited"
  std::string reason;  // "Resources", "NonZeroExitCode", ... when the scheduler gives one
  std::optional<int> exit_code;
  bool array = false;  // the summary of an array's tasks (summarize_tasks): `raw` holds their counts
  bool finished() const { return phase != Phase::pending && phase != Phase::running; }
  bool succeeded() const { return phase == Phase::completed; }
};

// "RUNNING", "PENDING (Resources)", "FAILED (exit 3)", "finished (state unknown to scheduler)"; an array's
// summary: "4 tasks: 1 running, 1 pending, 2 completed".
std::string describe(const JobState& s);

// An array job's state from its tasks': running while any task runs or some have ended and others wait, pending
// while all wait; once all have ended, completed only if every task completed, else failed, timeout or cancelled
// (in that order), or finished_unknown when the rest completed but the scheduler forgot some.
JobState summarize_tasks(const std::vector<JobState>& tasks);

}  // namespace hpclaunch
