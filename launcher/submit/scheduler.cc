#include "submit/scheduler.h"

#include <regex>

#include "util/error.h"
#include "util/strings.h"

namespace hpclaunch {

std::vector<std::string> submit_command(Scheduler scheduler, const std::string& script) {
  if (scheduler == Scheduler::pbs) return {"qsub", script};
  return {"sbatch", "--parsable", script};
}

std::string parse_submit_answer(Scheduler scheduler, const ProcessResult& answer) {
  const char* tool = scheduler == Scheduler::pbs ? "qsub" : "sbatch";
  if (answer.exit_code == 127)
    throw failure(tool, "not found on this machine (" + std::string(trim(answer.err)) + ")",
                  "run hpclaunch on the cluster's login node, or use --dry-run to only render");
  if (answer.exit_code != 0) {
    std::string msg(trim(answer.err.empty() ? answer.out : answer.err));
    size_t nl = msg.find('\n');
    if (nl != std::string::npos) msg = msg.substr(0, nl) + " ...";
    throw failure(tool, "refused the job (exit " + std::to_string(answer.exit_code) + "): " + msg,
                  "fix what the scheduler names; nothing was submitted");
  }
  std::string out(trim(answer.out));
  static const std::regex k_slurm("([0-9]+)(;[A-Za-z0-9_.-]+)?");
  static const std::regex k_pbs("([0-9]+(\\[[0-9]*\\])?)(\\.[A-Za-z0-9_.-]+)?");
  std::smatch m;
  if (scheduler == Scheduler::pbs ? std::regex_match(out, m, k_pbs) : std::regex_match(out, m, k_slurm))
    return scheduler == Scheduler::pbs ? out : m[1].str();
  throw failure(tool, "answered '" + out + "', which holds no job id", "check the scheduler's state with squeue/qstat");
}

std::string submit_to_scheduler(Scheduler scheduler, const std::string& script, const CommandRunner& run) {
  return parse_submit_answer(scheduler, run(submit_command(scheduler, script)));
}

}  // namespace hpclaunch
