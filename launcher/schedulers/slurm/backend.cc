#include "schedulers/slurm/backend.h"

#include <algorithm>
#include <filesystem>

#include "util/error.h"
#include "util/strings.h"

namespace hpclaunch {

namespace fs = std::filesystem;

namespace {

const char* k_slurm_fix =
    "the scheduler cannot be asked: check that slurmctld is up and SLURM_CONF points at it (`scontrol ping`)";

// A task of an array that squeue no longer lists and that left no output.
JobState never_started() {
  JobState s;
  s.phase = Phase::cancelled;
  s.raw = "CANCELLED";
  s.reason = "before it started";
  return s;
}

// Every query asks the same way, whether for one job, an array's tasks or every job in view: the ids in one
// squeue (state, reason and exit code of each job and array task slurmctld still holds); for what it has forgotten
// (MinJobAge), one sacct; where accounting is off (sacct fails), what the job directory shows. Each job's states
// come back one per name squeue lists it under: a job's own, or each task of an array in task order.
struct SlurmLookup {
  std::string error;  // the job's own trouble (never submitted): no states
  std::vector<JobState> states;
};

std::vector<SlurmLookup> look_up(const SchedulerBackend& backend, const std::vector<JobRecord>& jobs,
                                 const CommandRunner& run) {
  std::vector<SlurmLookup> out(jobs.size());
  const std::vector<std::string> ids = listed_ids_of(jobs, &out);
  auto names = [](const JobRecord& job) {  // the ids squeue -r lists the job under
    std::vector<std::string> n;
    if (job.is_array() && job.per_task())  // its tasks are jobs of their own
      for (int i = 0; i < job.array_tasks; ++i) n.push_back(task_record(job, i).job_id);
    else if (job.is_array())
      for (int i = 0; i < job.array_tasks; ++i) n.push_back(job.job_id + "_" + std::to_string(i));
    else
      n.push_back(job.job_id);
    return n;
  };
  if (ids.empty()) return out;
  std::vector<std::string> squeue = squeue_jobs_command(ids);
  ProcessResult r = run(squeue);
  std::map<std::string, JobState> known;
  if (r.exit_code == 0) known = parse_squeue_jobs(r.out);
  else if (!slurm_unknown_job(r)) command_failed(squeue, r, k_slurm_fix);
  std::vector<std::string> forgotten;
  for (size_t i = 0; i < jobs.size(); ++i)
    if (out[i].error.empty())
      for (const auto& name : names(jobs[i]))
        if (!known.count(name) && !name.empty())
          forgotten.push_back(jobs[i].is_array() && jobs[i].per_task() ? name : jobs[i].listed_id());
  if (!forgotten.empty()) {
    std::sort(forgotten.begin(), forgotten.end());
    forgotten.erase(std::unique(forgotten.begin(), forgotten.end()), forgotten.end());
    ProcessResult a = run(sacct_jobs_command(forgotten));
    if (a.exit_code == 0)  // no accounting ("Slurm accounting storage is disabled"): the job directories tell
      for (const auto& [id, state] : parse_sacct_jobs(a.out)) known.emplace(id, state);
  }
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (!out[i].error.empty()) continue;
    std::vector<JobState>& states = out[i].states;
    for (const auto& name : names(jobs[i])) {
      if (auto it = known.find(name); it != known.end()) {
        states.push_back(it->second);
        continue;
      }
      // Forgotten by squeue and sacct: a task that left no output never started (Slurm drops a pending task
      // that is cancelled from the list at once); otherwise the job directory tells.
      bool task = jobs[i].task || jobs[i].is_array();
      JobRecord one = jobs[i].is_array() ? task_record(jobs[i], static_cast<int>(states.size())) : jobs[i];
      JobState s = forgotten_job(backend.output_files(one));
      states.push_back(task && s.reason == k_no_output ? never_started() : s);
    }
  }
  return out;
}

}  // namespace

std::string SlurmBackend::submit(const std::string& script, const std::vector<std::string>& options,
                                 const CommandRunner& run) const {
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back(script);
  return parse_sbatch_answer(run(argv));
}

std::vector<JobUsage> SlurmBackend::usage(const std::vector<JobRecord>& jobs, const CommandRunner& run) const {
  std::vector<JobUsage> out(jobs.size());
  std::vector<std::string> ids;
  for (const auto& job : jobs)
    if (!job.job_id.empty()) ids.push_back(job.job_id);
  if (ids.empty()) return out;
  const ProcessResult r = run(sacct_usage_command(ids));
  const std::string said = first_line(r);  // used when sacct failed: its own words
  const std::map<std::string, JobUsage> known = r.exit_code == 0 ? parse_sacct_usage(r.out) : std::map<std::string, JobUsage>{};
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (auto it = known.find(jobs[i].job_id); it != known.end()) out[i] = it->second;
    else if (r.exit_code != 0) out[i].note = "not recorded (sacct: " + (said.empty() ? "exit " + std::to_string(r.exit_code) : said) + ")";
    else out[i].note = "not recorded (sacct: no record of job " + jobs[i].job_id + ")";
  }
  return out;
}

JobState SlurmBackend::query(const JobRecord& job, const CommandRunner& run) const {
  require_submitted(job);
  std::vector<JobState> states = look_up(*this, {job}, run).front().states;
  return job.is_array() ? summarize_tasks(states) : states.front();
}

std::vector<JobState> SlurmBackend::query_tasks(const JobRecord& array, const CommandRunner& run) const {
  require_submitted(array);
  return look_up(*this, {array}, run).front().states;
}

std::vector<JobAnswer> SlurmBackend::query_many(const std::vector<JobRecord>& jobs, const CommandRunner& run) const {
  std::vector<JobAnswer> out(jobs.size());
  std::vector<SlurmLookup> found = look_up(*this, jobs, run);
  for (size_t i = 0; i < jobs.size(); ++i) {
    out[i].error = found[i].error;
    if (found[i].error.empty())
      out[i].state = jobs[i].is_array() ? summarize_tasks(found[i].states) : found[i].states.front();
  }
  return out;
}

void SlurmBackend::cancel(const JobRecord& job, const CommandRunner& run) const {
  require_submitted(job);
  std::vector<std::string> argv = {"scancel"};
  for (const auto& id : job.scheduler_jobs()) argv.push_back(id);
  run_cancel(argv, job.job_id, slurm_unknown_job, k_slurm_fix, run);
}

void SlurmBackend::requeue_excluding(const std::string& job_id, const std::vector<std::string>& exclude,
                                     const CommandRunner& run) const {
  // Slurm changes ExcNodeList of pending jobs only: requeue first (the job is pending from then on, while this
  // script, which must ignore the SIGTERM that ends the run, still has KillWait seconds), then exclude.
  std::vector<std::string> requeue = {"scontrol", "requeue", job_id};
  if (ProcessResult r = run(requeue); r.exit_code != 0) command_failed(requeue, r, "the job ends here; resubmit it");
  if (exclude.empty()) return;
  std::vector<std::string> update = {"scontrol", "update", "JobId=" + job_id, "ExcNodeList=" + join(exclude, ",")};
  if (ProcessResult r = run(update); r.exit_code != 0)
    command_failed(update, r, "the job was requeued without the exclusion; `hpclaunch cancel` it if those nodes must stay out");
}

std::vector<std::string> SlurmBackend::output_files(const JobRecord& job) const {
  fs::path d(job.dir);
  std::vector<std::string> out;
  if (!job.job_id.empty()) out.push_back((d / ("slurm-" + job.job_id + ".out")).string());
  out.push_back((d / "output.log").string());
  return out;
}

std::optional<TestVerdict> SlurmBackend::test_only(const std::string& script, const std::vector<std::string>& options,
                                                   const CommandRunner& run) const {
  std::vector<std::string> argv = {"sbatch", "--test-only"};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back(script);
  return parse_sbatch_test_only(run(argv));
}

ClusterInfo SlurmBackend::survey(const std::string& user, const CommandRunner& run) const {
  ClusterInfo info;
  info.scheduler = Scheduler::slurm;
  const char* fix = "run it on the site's login node, where slurmctld answers (`scontrol ping`)";
  info.partitions = parse_scontrol_partitions(ask_survey({"scontrol", "show", "partition", "-o"}, run, &info, fix));
  info.nodes = parse_scontrol_nodes(ask_survey({"scontrol", "show", "node", "-o"}, run, &info, fix));
  // The release and the block topology, where they answer (22.05 has no topology/block; neither is needed).
  auto ask_optional = [&](const std::vector<std::string>& argv) {
    ProcessResult r = run(argv);
    info.commands.push_back(join(argv, " "));
    return r.exit_code == 0 ? r.out : std::string();
  };
  info.version = parse_slurm_version(ask_optional({"sinfo", "--version"}));
  info.blocks = parse_scontrol_topology(ask_optional({"scontrol", "show", "topology"}));
  std::vector<std::string> assoc = dialect().accounts_command(user);
  ProcessResult r = run(assoc);
  info.commands.push_back(join(assoc, " "));
  if (r.exit_code == 0) {
    std::vector<std::string> accounts, qos;
    parse_sacctmgr_assoc(r.out, &accounts, &qos);
    info.accounts = accounts;
    info.qos = qos;
  }
  return info;
}

const SchedulerBackend& slurm_backend() {
  static const SlurmBackend backend;
  return backend;
}

}  // namespace hpclaunch
