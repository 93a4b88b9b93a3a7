// Handing a written job to its scheduler: sbatch (Slurm), qsub (PBS). The command runner is injected so tests
// can check the exact command lines and the parsing of every answer without a scheduler.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "site/profile.h"
#include "util/process.h"

namespace hpclaunch {

using CommandRunner = std::function<ProcessResult(const std::vector<std::string>& argv)>;

// The command that submits `script` on `scheduler`.
std::vector<std::string> submit_command(Scheduler scheduler, const std::string& script);

// The job id in a scheduler's answer: sbatch --parsable "123" or "123;cluster", qsub "123.server".
// Throws Error quoting the answer when it has no id, or the scheduler's own message when it failed.
std::string parse_submit_answer(Scheduler scheduler, const ProcessResult& answer);

// Runs submit_command and parses its answer.
std::string submit_to_scheduler(Scheduler scheduler, const std::string& script, const CommandRunner& run);

}  // namespace hpclaunch
