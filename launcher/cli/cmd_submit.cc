// `hpclaunch submit` and `hpclaunch render`: request -> plan -> script -> job directory -> scheduler.
#include <fmt/core.h>

#include <filesystem>

#include "cli/cli_util.h"
#include "cli/json_output.h"
#include "dialect/dialect.h"
#include "plan/job_spec.h"
#include "plan/sweep.h"
#include "remote/submit_once.h"
#include "site/launchers.h"
#include "submit/job_index.h"
#include "submit/submit_request.h"
#include "util/error.h"
#include "util/file.h"
#include "util/command.h"
#include "util/strings.h"

namespace hpclaunch {

namespace {

struct SubmitOptions : SubmitRequest {
  std::string spec;
  std::optional<int> array;        // --array N
  std::vector<std::string> sweep;  // --sweep KEY=V1,V2 (repeatable)
  bool sweep_zip = false;
  std::optional<int> max_concurrent;
  bool json = false;
};

// --NAME / --no-NAME into an optional that stays unset when neither is given, so a profile's default can apply
// (CLI11's add_flag sets an optional<bool> to false when the flag is absent).
void add_switch(CLI::App& app, const std::string& name, std::optional<bool>* value, const std::string& help) {
  app.add_flag_callback("--" + name, [value] { *value = true; }, help);
  app.add_flag_callback("--no-" + name, [value] { *value = false; }, "not --" + name);
}

// "agent (one task per node), srun, mpirun or pals (one task per GPU)", from the launchers' registry
// (site/launchers.h), so that a launcher registered there is offered here too.
std::string launcher_help() {
  std::vector<std::string> per_node, per_worker;
  for (const auto& [name, mode] : launch_mode_names())
    (launch_tasks(mode) == LaunchTasks::per_node ? per_node : per_worker).push_back(name);
  std::vector<std::string> parts;
  if (!per_node.empty()) parts.push_back(join_or(per_node) + " (one task per node)");
  if (!per_worker.empty()) parts.push_back(join_or(per_worker) + " (one task per GPU)");
  return join(parts, ", ");
}

void add_job_options(CLI::App& app, SubmitOptions* o) {
  JobRequest& r = o->request;
  app.add_option("--site", r.site, "site profile (`hpclaunch sites` lists them)");
  app.add_option("--spec", o->spec, "job spec YAML whose keys are these options and `command:` (examples/)");
  app.add_option("--nodes,-N", r.nodes, "number of nodes")->capture_default_str();
  app.add_option("--gpus-per-node", r.gpus_per_node, "GPUs (workers) per node; default: all of the node's (on --site local: 1 worker per emulated node)");
  app.add_option("--time,-t", r.time, "wall-clock limit: MM, HH:MM:SS, D-HH:MM, ... (default 1 h, capped by the queue)");
  app.add_option("--account,-A", r.account, "account / project to charge");
  app.add_option("--partition,-p", r.partition, "partition (PBS: queue); default from the profile");
  app.add_option("--qos,-q", r.qos, "quality of service; default from the profile");
  app.add_option("--constraint,-C", r.constraint, "node features, replacing the profile's (e.g. \"gpu&hbm80g\")");
  app.add_option("--launcher", r.launcher, launcher_help());
  app.add_option("--name,-J", r.name, "job name; default from the command");
  app.add_option("--container", r.container, "container image, run with the site's runtime");
  app.add_option("--module", r.modules, "module to load (repeatable)")->take_last();
  app.add_option("--env", r.env, "NAME=VALUE exported in the job (repeatable)")->take_last();
  add_switch(app, "requeue", &r.requeue, "Slurm: requeue on the warning signal (default: the profile's)");
  app.add_option("--signal", r.signal, "Slurm: warning signal before the limit, SIG@SECONDS (default USR1@120)");
  app.add_option("--max-requeues", r.max_requeues, "Slurm: requeue at most this many times (default 3)");
  app.add_option("--hang-timeout", r.hang_timeout,
                 "the agent's: seconds without progress after which the job's stacks are recorded and it restarts "
                 "(0: off; default: the profile's; docs/agent.md)");
  app.add_option("--spares", r.spares,
                 "the agent's: nodes beyond --nodes that wait in the job and take the place of a node that is lost "
                 "or hangs, without a requeue (default: the profile's, else 0; docs/agent.md)");
  app.add_option("--segment", r.segment,
                 "Slurm block topology: nodes per segment, each segment in one block (an NVL72 rack); --nodes must be "
                 "a multiple (default: the queue's; docs/site-profiles.md)");
  add_switch(app, "exclusive-topo", &r.exclusive_topo,
             "Slurm block topology: no other job in this job's blocks (sbatch --exclusive=topo)");
  add_switch(app, "preflight", &r.preflight,
             "run `hpclaunch check` on every rank first: a bad node stops the job, and with --requeue the next run "
             "leaves it out (docs/preflight.md)");
  add_switch(app, "snapshot", &r.snapshot,
             "run a copy of the code as it is now: a git tree's tracked and untracked, not ignored files (else the "
             "directory, less what .gitignore files name), copied into JOBDIR/snapshot; the job starts there, and so "
             "does every requeued run (default: the profile's; docs/snapshot.md)");
  app.add_option("--snapshot-exclude", r.snapshot_exclude,
                 "leave PATTERN out of the snapshot (.gitignore's syntax, from the tree's top; repeatable)")->take_all();
  app.add_option("--snapshot-max-size", r.snapshot_max_size,
                 "refuse a snapshot larger than SIZE (e.g. 512M, 2G; default: the profile's, else 256M)");
  app.add_option("--job-dir", o->job_dir, "where the script, plan and output go; default ./hpclaunch-jobs/NAME-TIME");
  app.add_option("--job-dir-mode", o->job_dir_mode, "the job directory's mode, octal (default 700: yours only; "
                 "e.g. 750 for your group to read it)");
  app.add_option("--site-file", o->site_files, "extra site profile YAML (repeatable)")->take_last();
  app.add_option("--array", o->array, "an array job of N tasks, each with HPCLAUNCH_ARRAY_TASK and {task} = its index");
  app.add_option("--sweep", o->sweep, "KEY=V1,V2,...: one array task per value, given as {KEY} in the command or "
                 "appended as --KEY V (repeatable: every combination)")->take_all();
  app.add_flag("--sweep-zip", o->sweep_zip, "task i takes the i-th value of every --sweep instead of every combination");
  app.add_option("--max-concurrent", o->max_concurrent, "run at most M tasks of the array at once");
  app.add_flag("--json", o->json, "print the job record (submit) or plan and script (render) as JSON (docs/json.md)");
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
  if (app.count("--snapshot-max-size")) o->request.snapshot_max_size_origin = "--snapshot-max-size";
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

// "4 tasks, at most 2 at once" / "4 tasks, one after another" (the local site).
std::string array_summary(const LaunchPlan& plan) {
  const ArrayPlan& a = plan.array;
  std::string out = fmt::format("{} task{}", a.count(), a.count() == 1 ? "" : "s");
  if (dialect_for(plan.site.scheduler).runs_here())
    return out + (a.max_concurrent > 1 ? fmt::format(", {} at a time", a.max_concurrent) : ", one after another");
  return out + (a.max_concurrent > 0 ? fmt::format(", at most {} at once", a.max_concurrent) : "");
}

// What submit prints of a submission, all of it here: the script (a dry run) or the job id on stdout (under
// --json, the record instead), the rest on stderr. Returns the exit code: a local job's own.
int print_submission(const Submission& s, JsonStdout& json) {
  const LaunchPlan& plan = s.plan;
  if (s.dry_run) {
    if (json.on()) json.print(render_json(plan, s.job_dir, s.script));
    else fmt::print("{}", s.script);
    if (plan.array.active())
      fmt::print(stderr, "hpclaunch: an array job of {}:\n{}", array_summary(plan), task_table(plan.command, plan.array, s.job_dir));
    if (!s.dependency_options.empty())
      fmt::print(stderr, "hpclaunch: submit adds to the {} command line: {}\n", to_string(s.scheduler),
                 join(s.dependency_options, " "));
    return 0;
  }
  if (s.per_task) {
    fmt::print(stderr, "hpclaunch: {} takes no job arrays: {} job(s), one per task, under {}/tasks\n", s.site,
               s.task_job_ids.size(), s.job_dir);
    if (json.on()) json.print(task_jobs_json(plan, s.job_dir, s.task_job_ids));
    else
      for (const auto& id : s.task_job_ids) fmt::print("{}\n", id);
    return 0;
  }
  if (json.on()) json.print(submit_json(s.record, plan, s.exit_code));
  if (s.exit_code) {
    if (*s.exit_code != 0)
      fmt::print(stderr, "hpclaunch: local {} {} exited with {}\n", plan.array.active() ? "array" : "job", s.job_id, *s.exit_code);
    return *s.exit_code;
  }
  if (s.detached)
    fmt::print(stderr, "hpclaunch: started {} {} on this machine in the background; its output: {}/output.log\n",
               plan.array.active() ? "array job" : "job", s.job_id, s.job_dir);
  else if (plan.array.active())
    fmt::print(stderr, "hpclaunch: submitted array job {} ({}) to {}; job directory {}\n", s.job_id, array_summary(plan),
               s.site, s.job_dir);
  else
    fmt::print(stderr, "hpclaunch: submitted job {} to {}; job directory {}\n", s.job_id, s.site, s.job_dir);
  if (!json.on()) fmt::print("{}\n", s.job_id);
  return 0;
}

int run_submit(const Args& args, bool dry_run_only) {
  SubmitOptions o;
  CLI::App app(dry_run_only ? "Print the batch script submit would write." : "Render a batch script and submit it.",
               dry_run_only ? "render" : "submit");
  add_job_options(app, &o);
  if (!dry_run_only) {
    app.add_flag("--dry-run", o.dry_run, "print the script and plan; write and submit nothing");
    app.add_flag("--detach", o.detach, "local site: run the job in the background and return at once, as a batch "
                 "scheduler's submit does (its output only in JOBDIR/output.log); other sites: the same as without");
    add_switch(app, "check", &o.check,
               "ask the scheduler to validate the script first (sbatch --test-only); default: the profile's submit_check");
  }
  std::string token;
  if (!dry_run_only)
    app.add_option("--submit-token", token, "--remote's: submit once for this token, however often asked")->group("");
  app.add_option("--snapshot-prepared", o.snapshot_prepared, "--remote's: the snapshot taken on the laptop and sent")
      ->group("");
  if (!parse_request(app, args, &o)) return 0;
  auto submit = [&] {
    JsonStdout json(o.json);
    if (dry_run_only) o.dry_run = true;
    SubmitEvents events;
    events.warning = [](const std::string& w) { fmt::print(stderr, "hpclaunch: warning: {}\n", w); };
    events.note = [](const std::string& n) { fmt::print(stderr, "hpclaunch: note: {}\n", n); };
    events.verdict = [](const TestVerdict& v) { fmt::print(stderr, "hpclaunch: --check: {}\n", v.message); };
    events.task_submitted = [&](int index, const std::string& id, const std::string& dir) {
      fmt::print(stderr, "hpclaunch: submitted task {} as job {}; job directory {}\n", index, id, dir);
    };
    events.submitted = [](const Submission& s) {
      if (!dialect_for(s.scheduler).runs_here() || s.detached) return;
      if (s.plan.array.active())
        fmt::print(stderr, "hpclaunch: running array {} on this machine ({}; {} emulated node(s) each); job directory {}\n",
                   s.job_id, array_summary(s.plan), s.plan.nodes, s.job_dir);
      else
        fmt::print(stderr, "hpclaunch: running {} on this machine ({} emulated node(s)); job directory {}\n", s.job_id,
                   s.plan.nodes, s.job_dir);
      std::fflush(stderr);
    };
    return print_submission(submit_request(o, run_capture, events), json);
  };
  if (token.empty()) return submit();
  // Asked over ssh by --remote: a retry after a lost connection finds the first attempt's job (remote/submit_once.h).
  return submit_once((std::filesystem::path(job_index_path()).parent_path() / "submit-tokens").string(), token, submit);
}

}  // namespace

int cmd_submit(const Args& args) { return run_submit(args, false); }
int cmd_render(const Args& args) { return run_submit(args, true); }

}  // namespace hpclaunch
