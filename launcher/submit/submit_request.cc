#include "submit/submit_request.h"

#include <cstdlib>
#include <filesystem>
#include <thread>

#include "dialect/dialect.h"
#include "plan/local_shape.h"
#include "render/render.h"
#include "site/registry.h"
#include "submit/binary_arch.h"
#include "submit/job_dir.h"
#include "submit/job_index.h"
#include "submit/snapshot.h"
#include "submit/submit_job.h"
#include "util/error.h"

namespace hpclaunch {

namespace {

// The user's default account, as the scheduler's accounting says (Slurm: sacctmgr); "" when it does not answer
// (no accounting, no such command) or the scheduler has no such query.
std::string default_account(const SchedulerDialect& dialect, const CommandRunner& run) {
  const char* user = std::getenv("USER");
  if (!user || !*user) return {};
  std::vector<std::string> argv = dialect.default_account_command(user);
  if (argv.empty()) return {};
  ProcessResult r = run(argv);
  return r.exit_code == 0 ? dialect.parse_default_account(r.out) : std::string();
}

LaunchPlan plan_for(const SubmitRequest& o, const CommandRunner& run) {
  SiteRegistry sites = load_sites(o.site_files, scheduler_checks());
  int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  SiteProfile site = with_machine_shape(sites.get(o.request.site), o.request, cores);
  JobRequest request = o.request;
  if (request.account.empty()) request.default_account = default_account(dialect_for(site.scheduler), run);
  return make_plan(request, site);
}

// The --after values as the scheduler's dependencies: a JOB listed by `hpclaunch jobs` (id or directory) is its
// scheduler job id; anything else is passed on as a job id, for the scheduler to judge.
std::vector<Dependency> dependencies(const std::vector<std::string>& after) {
  std::vector<Dependency> out;
  std::vector<std::string> index = after.empty() ? std::vector<std::string>() : read_job_index();
  for (const auto& text : after) {
    Dependency d = parse_dependency(text);
    try {
      if (JobRecord r = resolve_job(d.job_id, index); r.submitted && !r.job_id.empty()) d.job_id = r.job_id;
    } catch (const Error&) {
    }
    out.push_back(d);
  }
  return out;
}

// Where the job starts: the submit directory, or its place in the job's snapshot (every run of the job starts
// there, a requeued one too, since the script says so).
std::string job_workdir(const std::optional<SnapshotSource>& snapshot, const std::string& job_dir) {
  if (!snapshot) return std::filesystem::current_path().string();
  return snapshot_workdir(snapshot_dir(job_dir), snapshot->root, snapshot->cwd);
}

RenderContext context_for(const LaunchPlan& plan, const std::string& job_dir, const SchedulerBackend& backend,
                          const std::optional<SnapshotSource>& snapshot) {
  RenderContext ctx{self_executable(), job_workdir(snapshot, job_dir), job_dir, {}};
  ctx.snapshot = snapshot.has_value();
  if (plan.array.active()) ctx.array_directives = backend.array_options(plan.array.count(), plan.array.max_concurrent);
  return ctx;
}

// The job's script, or, for a job per task (per_task), every task's.
std::string render_for(const LaunchPlan& plan, const std::string& job_dir, const SchedulerBackend& backend, bool per_task,
                       const std::optional<SnapshotSource>& snapshot) {
  if (per_task) return render_task_jobs(plan, job_dir, context_for(plan, job_dir, backend, snapshot));
  return render_script(plan, context_for(plan, job_dir, backend, snapshot), backend.dialect());
}

}  // namespace

Submission submit_request(const SubmitRequest& o, const CommandRunner& run, const SubmitEvents& events) {
  Submission s;
  s.dry_run = o.dry_run;
  const mode_t mode = o.job_dir_mode.empty() ? k_default_job_dir_mode : parse_job_dir_mode(o.job_dir_mode);
  s.plan = plan_for(o, run);
  if (events.warning)
    for (const auto& w : s.plan.warnings) events.warning(w);
  const LaunchPlan& plan = s.plan;
  const SchedulerBackend& backend = backend_for(plan.site.scheduler);
  s.scheduler = backend.kind();
  s.site = plan.site.name;
  const std::string stamp = timestamp_now();
  s.job_dir = choose_job_dir(o.job_dir, plan.job_name, stamp);  // a dry run's, and the check of --job-dir
  s.after = dependencies(o.after);
  s.dependency_options = backend.dependency_options(s.after);
  s.per_task = plan.array.active() && !capabilities_of(plan.site).arrays;
  // Listed (and checked: readable, not too large) before anything is written; copied with the job directory.
  std::optional<SnapshotSource> snapshot;
  if (SnapshotSettings settings = snapshot_settings(o.request, plan.site); !o.snapshot_prepared.empty())
    snapshot = prepared_snapshot(o.snapshot_prepared, settings);  // taken on the laptop (submit --remote)
  else if (settings.on)
    snapshot = list_snapshot(settings, std::filesystem::current_path().string(), s.job_dir, run);
  if (snapshot && events.warning)
    for (const auto& w : snapshot->warnings) events.warning(w);
  if (o.dry_run) {
    s.script = render_for(plan, s.job_dir, backend, s.per_task, snapshot);
    return s;
  }
  check_submittable(plan);  // a retired site: refused before anything is written
  check_binary_arch(plan.site, self_executable());  // the script runs this binary on the nodes (Roihu: aarch64)
  // Reserved (mkdir) before rendering: another submit from this directory may take the name meanwhile.
  s.job_dir = reserve_job_dir(o.job_dir, plan.job_name, stamp);
  try {
    s.script = render_for(plan, s.job_dir, backend, s.per_task, snapshot);
  } catch (...) {
    remove_job_dir(s.job_dir);
    throw;
  }
  s.script_path = s.job_dir + "/job.sh";
  const char* scratch = plan.site.scratch.empty() ? nullptr : std::getenv(plan.site.scratch.front().c_str());
  if (std::string w = check_job_dir_location(plan.site, std::filesystem::absolute(s.job_dir).string(), scratch ? scratch : "");
      !w.empty() && events.warning)
    events.warning(w);
  SubmitSteps steps;
  steps.job_dir_mode = mode;
  steps.after = s.after;
  steps.detach = o.detach;
  s.detached = o.detach && dialect_for(backend.kind()).runs_here();
  steps.validate = o.check.value_or(plan.site.submit_check);
  if (steps.validate && !backend.dialect().capabilities().test_only && o.check && events.note)
    events.note(std::string(to_string(backend.kind())) + " has no test-only validation; --check is skipped");
  steps.on_verdict = events.verdict;
  steps.on_submitted = [&](const JobRecord& r) {
    s.job_id = r.job_id;
    if (events.submitted) events.submitted(s);
  };
  if (snapshot) {
    steps.snapshot = snapshot_record(*snapshot, snapshot_dir(s.job_dir));
    s.snapshot = steps.snapshot;
    steps.fill = [&](const std::string& dir) { copy_snapshot(*snapshot, snapshot_dir(dir)); };
  }
  if (s.per_task) {
    s.script_path.clear();  // each task has its own: JOBDIR/tasks/I/job.sh
    try {
      if (steps.fill) steps.fill(s.job_dir);  // the array's directory is written in place (submit_task_jobs)
    } catch (...) {
      remove_job_dir(s.job_dir);
      throw;
    }
    s.task_job_ids = submit_task_jobs(plan, s.job_dir, context_for(plan, s.job_dir, backend, snapshot),
                                      backend, run, steps, events.task_submitted);
    return s;
  }
  SubmittedJob job = submit_job(plan, s.script, s.job_dir, backend, run, steps);
  s.job_id = job.record.job_id;
  s.exit_code = job.exit_code;
  s.record = job.record;
  return s;
}

}  // namespace hpclaunch
