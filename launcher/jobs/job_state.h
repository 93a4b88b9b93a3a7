// A job's state as its scheduler tells it: Slurm (squeue, then scontrol), PBS (qstat -f, then qstat -x -f) or
// the local runner's JOBDIR/state.json. The parsers are pure functions of a command's output; the commands run
// through an injected CommandRunner, so tests check both without a scheduler.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "jobs/job_record.h"
#include "submit/scheduler.h"

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
  bool finished() const { return phase != Phase::pending && phase != Phase::running; }
  bool succeeded() const { return phase == Phase::completed; }
};

// "RUNNING" -> running, "CANCELLED by 0" -> cancelled, ... ; nullopt for a word Slurm does not use.
std::optional<Phase> slurm_phase(std::string_view state);
// `squeue -h -t all -j ID -o %T`: one state word per line (first line counts); nullopt when empty.
std::optional<JobState> parse_squeue(std::string_view out);
// `scontrol show job ID`: JobState=, Reason=, ExitCode=N:S; nullopt when it holds no JobState.
std::optional<JobState> parse_scontrol_job(std::string_view out);
// `qstat -f ID` / `qstat -x -f ID` (PBS Pro/OpenPBS/Torque): job_state = Q|R|E|H|W|F|..., Exit_status.
std::optional<JobState> parse_qstat_full(std::string_view out);
// JOBDIR/state.json of a local job; `alive` says whether its recorded pid still runs.
JobState parse_local_state(std::string_view json, bool alive, const std::string& path);

// True if a failed scheduler command says the job id is unknown to it (forgotten or never there).
bool is_unknown_job_answer(const ProcessResult& r);

// "RUNNING", "PENDING (Resources)", "FAILED (exit 3)", "finished (state unknown to scheduler)".
std::string describe(const JobState& s);

// The job's state, asking its scheduler. A scheduler that cannot be asked (command missing, or failing for a
// reason other than an unknown job id) throws Error naming the command and its message; a job the scheduler has
// forgotten comes back finished_unknown (with what the job directory shows in `reason`).
JobState query_state(const JobRecord& job, const CommandRunner& run);

// Cancels the job: scancel / qdel / SIGTERM to a local job's process group. Throws Error naming the command.
void cancel_job(const JobRecord& job, const CommandRunner& run);

}  // namespace hpclaunch
