// A job's state in the scheduler-neutral words `jobs`, `status` and `wait` show. Each backend
// (schedulers/NAME/backend.cc) maps its scheduler's answers onto it.
#pragma once
#include <optional>
#include <string>
#include <utility>
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

// What the scheduler's accounting says a job used (Slurm's sacct: elapsed time, the largest RSS of its steps,
// energy), as names and values in the order shown, or why it says nothing (`note`, one line).
struct JobUsage {
  std::vector<std::pair<std::string, std::string>> items;  // {"elapsed", "00:01:05"}, {"max RSS", "1.2 GiB (step 0)"}
  std::string note;  // "not recorded (sacct: Slurm accounting storage is disabled)", or ""
};

// "RUNNING", "PENDING (Resources)", "FAILED (exit 3)", "finished (state unknown to scheduler)"; an array's
// summary: "4 tasks: 1 running, 1 pending, 2 completed".
std::string describe(const JobState& s);

// An array job's state from its tasks': running while any task runs or some have ended and others wait, pending
// while all wait; once all have ended, completed only if every task completed, else failed, timeout or cancelled
// (in that order), or finished_unknown when the rest completed but the scheduler forgot some.
JobState summarize_tasks(const std::vector<JobState>& tasks);

}  // namespace hpclaunch
