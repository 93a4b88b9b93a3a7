#include "scheduler/pbs.h"

#include <filesystem>

#include "util/error.h"
#include "util/strings.h"

namespace hpclaunch {

namespace fs = std::filesystem;

namespace {

const char* k_fix = "the scheduler cannot be asked: check that the PBS server is up (`qstat -B`)";

}  // namespace

std::string PbsBackend::submit(const std::string& script, const std::vector<std::string>& options,
                               const CommandRunner& run) const {
  // Each option is "-W depend=..." or "-J 0-3": qsub takes the flag and its value as two words.
  std::vector<std::string> argv = {"qsub"};
  for (const auto& o : options) {
    size_t sp = o.find(' ');
    argv.push_back(o.substr(0, sp));
    if (sp != std::string::npos) argv.push_back(o.substr(sp + 1));
  }
  argv.push_back(script);
  return parse_qsub_answer(run(argv));
}

JobState PbsBackend::query(const JobRecord& job, const CommandRunner& run) const {
  if (job.is_array()) return summarize_tasks(query_tasks(job, run));  // qstat -f of each subjob, 1234[3].server
  require_submitted(job);
  for (bool history : {false, true}) {
    std::vector<std::string> qstat = {"qstat", "-f", job.job_id};
    if (history) qstat.insert(qstat.begin() + 1, "-x");
    ProcessResult r = run(qstat);
    if (r.exit_code == 0) {
      if (auto s = parse_qstat_full(r.out)) return *s;
      continue;
    }
    if (!pbs_unknown_job(r)) {
      // Torque has no -x: a usage complaint there means "no history", not "no server".
      if (history && (r.err.find("invalid option") != std::string::npos || r.err.find("usage") != std::string::npos))
        break;
      command_failed(qstat, r, k_fix);
    }
  }
  return forgotten_job(output_files(job));
}

void PbsBackend::cancel(const JobRecord& job, const CommandRunner& run) const {
  require_submitted(job);
  run_cancel({"qdel", job.job_id}, job.job_id, pbs_unknown_job, k_fix, run);
}

std::vector<std::string> PbsBackend::output_files(const JobRecord& job) const {
  fs::path d(job.dir);
  std::vector<std::string> out;
  if (!job.job_id.empty()) {
    out.push_back((d / (job.job_id + ".OU")).string());
    if (!job.job_name.empty()) out.push_back((d / (job.job_name + ".o" + pbs_numeric_prefix(job.job_id))).string());
  }
  out.push_back((d / "output.log").string());
  return out;
}

ClusterInfo PbsBackend::survey(const std::string&, const CommandRunner& run) const {
  ClusterInfo info;
  info.scheduler = Scheduler::pbs;
  const char* fix = "run it on the site's login node, where the PBS server answers (`qstat -B`)";
  info.partitions = parse_qstat_queues(ask_survey({"qstat", "-Qf"}, run, &info, fix));
  info.nodes = parse_pbsnodes(ask_survey({"pbsnodes", "-av"}, run, &info, fix));
  return info;
}

}  // namespace hpclaunch
