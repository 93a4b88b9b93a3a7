#include "schedulers/flux/backend.h"

#include <filesystem>

#include "util/error.h"

namespace hpclaunch {

namespace fs = std::filesystem;

namespace {

const char* k_flux_fix = "Flux cannot be asked: run hpclaunch where a Flux instance answers (`flux getattr rank`)";

// Every job's states in one `flux jobs`: a job's own, or each task's of a job per task, in task order. A job flux
// jobs does not list (purged, or of another instance) is what its directory shows.
std::vector<JobAnswer> flux_look_up(const SchedulerBackend& backend, const std::vector<JobRecord>& jobs,
                               const CommandRunner& run, std::vector<std::vector<JobState>>* task_states) {
  std::vector<JobAnswer> out(jobs.size());
  const std::vector<std::string> ids = listed_ids_of(jobs, &out);
  task_states->assign(jobs.size(), {});
  if (ids.empty()) return out;
  std::vector<std::string> argv = flux_jobs_command(ids);
  ProcessResult r = run(argv);
  // An id flux jobs does not know is named on stderr, with exit 1, while the others are listed.
  if (r.exit_code != 0 && !flux_unknown_job(r)) command_failed(argv, r, k_flux_fix);
  std::map<std::string, JobState> known = parse_flux_jobs(r.out);
  auto state_of = [&](const JobRecord& one) {
    auto it = known.find(flux_plain_id(one.job_id).value_or(one.job_id));
    return it != known.end() ? it->second : forgotten_job(backend.output_files(one));
  };
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (!out[i].error.empty()) continue;
    if (jobs[i].is_array()) {  // only a job per task: flux batch has no arrays
      for (int t = 0; t < jobs[i].array_tasks; ++t) (*task_states)[i].push_back(state_of(task_record(jobs[i], t)));
      out[i].state = summarize_tasks((*task_states)[i]);
    } else {
      out[i].state = state_of(jobs[i]);
    }
  }
  return out;
}

}  // namespace

std::string FluxBackend::submit(const std::string& script, const std::vector<std::string>& options,
                                const CommandRunner& run) const {
  std::vector<std::string> argv = {"flux", "batch"};
  argv.insert(argv.end(), options.begin(), options.end());  // --dependency=afterok:ID, one word each
  argv.push_back(script);
  return parse_flux_batch_answer(run(argv));
}

JobState FluxBackend::query(const JobRecord& job, const CommandRunner& run) const {
  require_submitted(job);
  std::vector<std::vector<JobState>> tasks;
  JobAnswer a = flux_look_up(*this, {job}, run, &tasks).front();
  if (!a.state) throw Error(job.dir, a.error);
  return *a.state;
}

std::vector<JobState> FluxBackend::query_tasks(const JobRecord& array, const CommandRunner& run) const {
  require_submitted(array);
  std::vector<std::vector<JobState>> tasks;
  flux_look_up(*this, {array}, run, &tasks);
  return tasks.front();
}

std::vector<JobAnswer> FluxBackend::query_many(const std::vector<JobRecord>& jobs, const CommandRunner& run) const {
  std::vector<std::vector<JobState>> tasks;
  return flux_look_up(*this, jobs, run, &tasks);
}

void FluxBackend::cancel(const JobRecord& job, const CommandRunner& run) const {
  require_submitted(job);
  std::vector<std::string> argv = {"flux", "cancel"};
  for (const auto& id : job.scheduler_jobs()) argv.push_back(id);
  run_cancel(argv, job.job_id, flux_unknown_job, k_flux_fix, run);
}

void flux_signal(const JobRecord& job, int number, const CommandRunner& run) {
  require_submitted(job);
  std::vector<std::string> argv = {"flux", "job", "kill", "--signal=" + std::to_string(number)};
  for (const auto& id : job.scheduler_jobs()) argv.push_back(id);
  ProcessResult r = run(argv);
  if (r.exit_code == 0) return;
  if (flux_unknown_job(r)) throw failure(job.job_id, "is not running: " + first_line(r), "nothing to signal");
  command_failed(argv, r, k_flux_fix);
}

void FluxBackend::send_signal(const JobRecord& job, int number) const { flux_signal(job, number, run_capture); }

std::vector<std::string> FluxBackend::output_files(const JobRecord& job) const {
  return {(fs::path(job.dir) / "output.log").string()};  // the directives' --output
}

const SchedulerBackend& flux_backend() {
  static const FluxBackend backend;
  return backend;
}

}  // namespace hpclaunch
