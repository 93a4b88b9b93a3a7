// What a job directory says about its job (job.json, plan.json), and which job a JOB argument names: an id from
// the job index or a job directory. Read by `jobs`, `status`, `cancel`, `logs`, `wait` and `plot`.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace hpclaunch {

struct JobRecord {
  std::string dir;              // absolute job directory
  bool dir_exists = true;       // false: listed in the index but removed since
  bool submitted = false;       // job.json present (the scheduler accepted the job)
  std::string job_id;           // "1234", "56.pbshost", "local-1732189200-4242"
  std::string scheduler;        // "slurm", "pbs", "local"
  std::string site;
  std::string submitted_at;     // "20261121-104500"
  int nodes = 0;
  std::string job_name;         // plan.json's job_name (PBS names its output file after it)
  std::vector<std::string> command;  // plan.json's command, as typed
};

// Reads DIR/job.json and DIR/plan.json. A vanished directory gives dir_exists = false, not an error; a file
// that is there but not JSON throws Error naming it.
JobRecord read_job_record(const std::string& dir);

// The job `ref` names: an existing directory, or a job id (or directory) listed in `index`. Throws Error
// naming `ref` with the fix when it is neither.
JobRecord resolve_job(const std::string& ref, const std::vector<std::string>& index);

// The value of `--metrics` (or `--metrics=`) in a command, if any.
std::optional<std::string> metrics_flag(const std::vector<std::string>& command);

// Where the job's metrics file is expected: `--metrics` of the command (relative paths against the job's
// working directory guesses: the directory holding hpclaunch-jobs/, then `cwd`), else JOBDIR/metrics.jsonl.
// The first candidate that exists, or the first candidate when none exists yet.
std::string metrics_path(const JobRecord& job, const std::string& cwd);

// The files the job's output goes to, most specific first: slurm-ID.out, output.log, PBS's ID.OU / NAME.oNUM.
std::vector<std::string> output_candidates(const JobRecord& job);

}  // namespace hpclaunch
