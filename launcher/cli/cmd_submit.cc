// `hpclaunch submit` and `hpclaunch render`: request -> plan -> script -> job directory -> scheduler.
#include <fmt/core.h>

#include <cstdlib>
#include <filesystem>
#include <thread>

#include "cli/cli_util.h"
#include "util/file.h"
#include "plan/job_spec.h"
#include "plan/plan.h"
#include "render/render.h"
#include "site/registry.h"
#include "plan/local_shape.h"
#include "scheduler/backend.h"
#include "submit/job_dir.h"
#include "submit/submit_job.h"
#include "util/error.h"
#include "util/process.h"
#include "util/strings.h"
#include "record/job_record.h"
#include "submit/job_index.h"

namespace hpclaunch {

namespace {

struct SubmitOptions {
  JobRequest request;
  std::string spec;
  std::vector<std::string> site_files;
  std::string job_dir;
  std::string job_dir_mode;
  bool dry_run = false;
  std::optional<bool> check;  // --check / --no-check; unset: the profile's submit_check
  std::vector<std::string> after;  // --after JOB[:ok|any|notok]
  std::optional<int> array;        // --array N
  std::vector<std::string> sweep;  // --sweep KEY=V1,V2 (repeatable)
  bool sweep_zip = false;
  std::optional<int> max_concurrent;
};

// --NAME / --no-NAME into an optional that stays unset when neither is given, so a profile's default can apply
// (CLI11's add_flag sets an optional<bool> to false when the flag is absent).
void add_switch(CLI::App& app, const std::string& name, std::optional<bool>* value, const std::string& help) {
  app.add_flag_callback("--" + name, [value] { *value = true; }, help);
  app.add_flag_callback("--no-" + name, [value] { *value = false; }, "not --" + name);
}

void add_job_options(CLI::App& app, SubmitOptions* o) {
  JobRequest& r = o->request;
  app.add_option("--site", r.site, "site profile (`hpclaunch sites` lists them)");
  app.add_option("--spec", o->spec, "job spec YAML whose keys are these options and `command:` (examples/)");
  app.add_option("--nodes,-N", r.nodes, "number of nodes")->capture_default_str();
  app.add_option("--gpus-per-node", r.gpus_per_node, "GPUs (workers) per node; default: all of the node's");
  app.add_option("--time,-t", r.time, "wall-clock limit: MM, HH:MM:SS, D-HH:MM, ... (default 1 h, capped by the queue)");
  app.add_option("--account,-A", r.account, "account / project to charge");
  app.add_option("--partition,-p", r.partition, "partition (PBS: queue); default from the profile");
  app.add_option("--qos,-q", r.qos, "quality of service; default from the profile");
  app.add_option("--constraint,-C", r.constraint, "node features, replacing the profile's (e.g. \"gpu&hbm80g\")");
  app.add_option("--launcher", r.launcher, "agent (one task per node), srun or mpirun (one task per GPU)");
  app.add_option("--name,-J", r.name, "job name; default from the command");
  app.add_option("--container", r.container, "container image, run with the site's runtime");
  app.add_option("--module", r.modules, "module to load (repeatable)")->take_last();
  app.add_option("--env", r.env, "NAME=VALUE exported in the job (repeatable)")->take_last();
  add_switch(app, "requeue", &r.requeue, "Slurm: requeue on the warning signal (default: the profile's)");
  app.add_option("--signal", r.signal, "Slurm: warning signal before the limit, SIG@SECONDS (default USR1@120)");
  app.add_option("--max-requeues", r.max_requeues, "Slurm: requeue at most this many times (default 3)");
  add_switch(app, "preflight", &r.preflight,
             "run `hpclaunch check` on every rank first: a bad node stops the job, and with --requeue the next run "
             "leaves it out (docs/preflight.md)");
  app.add_option("--job-dir", o->job_dir, "where the script, plan and output go; default ./hpclaunch-jobs/NAME-TIME");
  app.add_option("--job-dir-mode", o->job_dir_mode, "the job directory's mode, octal (default 700: yours only; "
                 "e.g. 750 for your group to read it)");
  app.add_option("--site-file", o->site_files, "extra site profile YAML (repeatable)")->take_last();
  app.add_option("--array", o->array, "an array job of N tasks, each with HPCLAUNCH_ARRAY_TASK and {task} = its index");
  app.add_option("--sweep", o->sweep, "KEY=V1,V2,...: one array task per value, given as {KEY} in the command or "
                 "appended as --KEY V (repeatable: every combination)")->take_all();
  app.add_flag("--sweep-zip", o->sweep_zip, "task i takes the i-th value of every --sweep instead of every combination");
  app.add_option("--max-concurrent", o->max_concurrent, "run at most M tasks of the array at once");
  app.add_option("--after", o->after, "start once JOB has ended: JOB[:ok|any|notok] (default ok; repeatable); JOB is a "
                 "scheduler job id or a job from `hpclaunch jobs`")->take_all();
}

std::string read_spec_file(const std::string& path) {
  auto text = read_file(path);
  if (!text) throw Error("--spec", "cannot read job spec '" + path + "'", "check the path and its permissions");
  return *text;
}

// Parses flags and the command; returns false when --help was printed.
bool parse_request(CLI::App& app, const Args& args, SubmitOptions* o) {
  SplitArgs split = split_at_separator(args);
  // The spec is read first so that the flags on the command line replace its values.
  for (size_t i = 0; i < split.options.size(); ++i) {
    const std::string& a = split.options[i];
    if (a == "--spec" && i + 1 < split.options.size()) o->spec = split.options[i + 1];
    if (a.rfind("--spec=", 0) == 0) o->spec = a.substr(7);
  }
  if (!o->spec.empty()) read_job_spec(o->spec, read_spec_file(o->spec), &o->request);
  if (!parse_or_throw(app, split.options)) return false;
  if (!split.command.empty()) o->request.command = split.command;
  ArrayRequest& a = o->request.array;  // the flags replace what the spec says
  if (o->array) a.count = o->array, a.count_origin = "--array";
  if (!o->sweep.empty()) {
    a.sweep.clear();
    for (const auto& s : o->sweep) a.sweep.push_back(parse_sweep_flag(s));
  }
  if (o->sweep_zip) a.zip = true, a.zip_origin = "--sweep-zip";
  if (o->max_concurrent) a.max_concurrent = o->max_concurrent, a.max_origin = "--max-concurrent";
  if (o->request.site.empty())
    throw Error("--site", "no site given", "pass --site NAME (`hpclaunch sites` lists them), or `site:` in --spec");
  if (o->request.command.empty())
    throw Error("--", "no command after `--`", "end the options with `-- CMD [ARG...]`, e.g. `-- python train.py`");
  return true;
}

// The user's default account, as the scheduler's accounting says (Slurm: sacctmgr); "" when it does not answer
// (no accounting, no such command) or the scheduler has no such query.
std::string default_account(const SchedulerDialect& dialect) {
  const char* user = std::getenv("USER");
  if (!user || !*user) return {};
  std::vector<std::string> argv = dialect.default_account_command(user);
  if (argv.empty()) return {};
  ProcessResult r = run_capture(argv);
  return r.exit_code == 0 ? dialect.parse_default_account(r.out) : std::string();
}

LaunchPlan plan_for(const SubmitOptions& o) {
  SiteRegistry sites = load_sites(o.site_files);
  int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  SiteProfile site = with_machine_shape(sites.get(o.request.site), o.request, cores);
  JobRequest request = o.request;
  if (request.account.empty()) request.default_account = default_account(dialect_for(site.scheduler));
  LaunchPlan plan = make_plan(request, site);
  for (const auto& w : plan.warnings) fmt::print(stderr, "hpclaunch: warning: {}\n", w);
  return plan;
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

RenderContext context_for(const std::string& job_dir, const LaunchPlan& plan, const SchedulerBackend& backend) {
  RenderContext ctx{self_executable(), std::filesystem::current_path().string(), job_dir, {}};
  if (plan.array.active()) ctx.array_directives = backend.array_options(plan.array.count(), plan.array.max_concurrent);
  return ctx;
}

// "4 tasks, at most 2 at once" / "4 tasks, one after another" (the local site).
std::string array_summary(const LaunchPlan& plan) {
  const ArrayPlan& a = plan.array;
  std::string out = fmt::format("{} task{}", a.count(), a.count() == 1 ? "" : "s");
  if (plan.site.scheduler == Scheduler::local)
    return out + (a.max_concurrent > 1 ? fmt::format(", {} at a time", a.max_concurrent) : ", one after another");
  return out + (a.max_concurrent > 0 ? fmt::format(", at most {} at once", a.max_concurrent) : "");
}

int run_submit(const Args& args, bool dry_run_only) {
  SubmitOptions o;
  CLI::App app(dry_run_only ? "Print the batch script submit would write." : "Render a batch script and submit it.",
               dry_run_only ? "render" : "submit");
  add_job_options(app, &o);
  if (!dry_run_only) {
    app.add_flag("--dry-run", o.dry_run, "print the script and plan; write and submit nothing");
    add_switch(app, "check", &o.check,
               "ask the scheduler to validate the script first (sbatch --test-only); default: the profile's submit_check");
  }
  if (!parse_request(app, args, &o)) return 0;

  SubmitSteps steps;
  steps.job_dir_mode = o.job_dir_mode.empty() ? k_default_job_dir_mode : parse_job_dir_mode(o.job_dir_mode);
  LaunchPlan plan = plan_for(o);
  const std::string stamp = timestamp_now();
  std::string dir = choose_job_dir(o.job_dir, plan.job_name, stamp);
  const SchedulerBackend& backend = backend_for(plan.site.scheduler);
  std::string script = render_script(plan, context_for(dir, plan, backend));
  std::vector<Dependency> after = dependencies(o.after);
  if (dry_run_only || o.dry_run) {
    fmt::print("{}", script);
    if (plan.array.active())
      fmt::print(stderr, "hpclaunch: an array job of {}:\n{}", array_summary(plan), task_table(plan.command, plan.array, dir));
    if (auto options = backend.dependency_options(after); !options.empty())
      fmt::print(stderr, "hpclaunch: submit adds to the {} command line: {}\n", to_string(backend.kind()), join(options, " "));
    return 0;
  }
  check_submittable(plan);  // a retired site: refused before anything is written
  // Another submit from this directory may have taken the name meanwhile: the reserved one is ours alone.
  if (std::string reserved = reserve_job_dir(o.job_dir, plan.job_name, stamp); reserved != dir) {
    dir = reserved;
    script = render_script(plan, context_for(dir, plan, backend));
  }
  const char* scratch = plan.site.scratch.empty() ? nullptr : std::getenv(plan.site.scratch.front().c_str());
  if (std::string w = check_job_dir_location(plan.site, std::filesystem::absolute(dir).string(), scratch ? scratch : "");
      !w.empty())
    fmt::print(stderr, "hpclaunch: warning: {}\n", w);
  steps.after = after;
  steps.validate = o.check.value_or(plan.site.submit_check);
  if (steps.validate && !backend.has_test_only() && o.check)
    fmt::print(stderr, "hpclaunch: note: {} has no test-only validation; --check is skipped\n", to_string(backend.kind()));
  steps.on_verdict = [](const TestVerdict& v) { fmt::print(stderr, "hpclaunch: --check: {}\n", v.message); };
  steps.on_submitted = [&](const JobRecord& r) {
    if (backend.kind() != Scheduler::local) return;
    if (plan.array.active())
      fmt::print(stderr, "hpclaunch: running array {} on this machine ({}; {} emulated node(s) each); job directory {}\n",
                 r.job_id, array_summary(plan), plan.nodes, dir);
    else
      fmt::print(stderr, "hpclaunch: running {} on this machine ({} emulated node(s)); job directory {}\n", r.job_id,
                 plan.nodes, dir);
    std::fflush(stderr);
  };
  SubmittedJob job = submit_job(plan, script, dir, backend, run_capture, steps);
  if (job.exit_code) {
    if (*job.exit_code != 0)
      fmt::print(stderr, "hpclaunch: local {} {} exited with {}\n", plan.array.active() ? "array" : "job", job.record.job_id,
                 *job.exit_code);
    return *job.exit_code;
  }
  if (plan.array.active())
    fmt::print(stderr, "hpclaunch: submitted array job {} ({}) to {}; job directory {}\n", job.record.job_id,
               array_summary(plan), plan.site.name, dir);
  else
    fmt::print(stderr, "hpclaunch: submitted job {} to {}; job directory {}\n", job.record.job_id, plan.site.name, dir);
  fmt::print("{}\n", job.record.job_id);
  return 0;
}

}  // namespace

int cmd_submit(const Args& args) { return run_submit(args, false); }
int cmd_render(const Args& args) { return run_submit(args, true); }

}  // namespace hpclaunch
