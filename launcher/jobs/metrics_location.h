// Where a job's metrics file is: the `--metrics` flag of its command, resolved the way the job saw it.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "record/job_record.h"

namespace hpclaunch {

// The value of `--metrics` (or `--metrics=`) in a command, if any; the last one counts.
std::optional<std::string> metrics_flag(const std::vector<std::string>& command);

// Where the job's metrics file is expected: `--metrics` of the command (relative paths against the job's
// working directory guesses: the directory holding hpclaunch-jobs/, then `cwd`), else JOBDIR/metrics.jsonl.
// The first candidate that exists, or the first candidate when none exists yet.
std::string metrics_path(const JobRecord& job, const std::string& cwd);

}  // namespace hpclaunch
