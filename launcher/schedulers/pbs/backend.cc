#include "schedulers/pbs/backend.h"

#include <filesystem>

#include "util/error.h"
#include "util/strings.h"

namespace hpclaunch {

namespace fs = std::filesystem;

namespace {

const char* k_pbs_fix = "the scheduler cannot be asked: check that the PBS server is up (`qstat -B`)";

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
  if (job.is_array()) return summarize_tasks(query_tasks(job, run));  // one qstat -x -f -t of all subjobs
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
      if (history && pbs_no_history(r)) break;
      command_failed(qstat, r, k_pbs_fix);
    }
  }
  return forgotten_job(output_files(job));
}

std::vector<JobState> PbsBackend::query_tasks(const JobRecord& array, const CommandRunner& run) const {
  require_submitted(array);
  auto known = qstat_jobs(array.listed_ids(), run);
  if (!known) return SchedulerBackend::query_tasks(array, run);  // Torque: each subjob's qstat
  return task_states(array, *known);
}

std::vector<JobAnswer> PbsBackend::query_many(const std::vector<JobRecord>& jobs, const CommandRunner& run) const {
  std::vector<JobAnswer> out(jobs.size());
  const std::vector<std::string> ids = listed_ids_of(jobs, &out);
  if (ids.empty()) return out;
  auto known = qstat_jobs(ids, run);
  if (!known) return SchedulerBackend::query_many(jobs, run);
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (!out[i].error.empty()) continue;
    if (jobs[i].is_array()) {
      out[i].state = summarize_tasks(task_states(jobs[i], *known));
    } else if (auto it = known->find(pbs_id_key(jobs[i].job_id)); it != known->end()) {
      out[i].state = it->second;
    } else {
      out[i].state = forgotten_job(output_files(jobs[i]));
    }
  }
  return out;
}

std::optional<std::map<std::string, JobState>> PbsBackend::qstat_jobs(const std::vector<std::string>& ids,
                                                                      const CommandRunner& run) const {
  // -x: finished jobs too (PBS Pro, OpenPBS); -t: every subjob of an array. An id qstat does not know is left
  // out of its answer (and named on stderr, with a non-zero exit) while the others are listed.
  std::vector<std::string> argv = {"qstat", "-x", "-f", "-t"};
  argv.insert(argv.end(), ids.begin(), ids.end());
  ProcessResult r = run(argv);
  if (r.exit_code != 0 && !pbs_unknown_job(r)) {
    if (pbs_no_history(r)) return std::nullopt;
    command_failed(argv, r, k_pbs_fix);
  }
  std::map<std::string, JobState> known;
  for (const auto& [id, state] : parse_qstat_jobs(r.out)) known[pbs_id_key(id)] = state;
  return known;
}

std::vector<JobState> PbsBackend::task_states(const JobRecord& array, const std::map<std::string, JobState>& known) const {
  std::vector<JobState> out;
  for (int i = 0; i < array.array_tasks; ++i) {
    JobRecord task = task_record(array, i);  // a task that is a job of its own has its own id
    auto it = known.find(pbs_id_key(array.per_task() ? task.job_id : dialect().task_job_id(array.job_id, i)));
    out.push_back(it != known.end() ? it->second : forgotten_job(output_files(task)));
  }
  return out;
}

void PbsBackend::cancel(const JobRecord& job, const CommandRunner& run) const {
  require_submitted(job);
  std::vector<std::string> argv = {"qdel"};
  for (const auto& id : job.scheduler_jobs()) argv.push_back(id);
  run_cancel(argv, job.job_id, pbs_unknown_job, k_pbs_fix, run);
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

const SchedulerBackend& pbs_backend() {
  static const PbsBackend backend;
  return backend;
}

}  // namespace hpclaunch
