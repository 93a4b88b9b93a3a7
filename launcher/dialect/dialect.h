// What a scheduler says, apart from running it: its batch directives, array syntax and variable, how it names a
// job and one task of an array, what its commands answer (parsed here, purely), its account queries, the launchers
// it can start and the GPU request styles it writes, and its face inside a job (in_job.h). One SchedulerDialect per
// scheduler (schedulers/NAME/dialect.h), below plan, render, record, survey and the runtime; the backend that runs
// its commands (schedulers/NAME/backend.cc) stands beside it in the scheduler's folder.
// Adding a scheduler: a folder with a dialect, a face, a backend, a template and their tests (ARCHITECTURE.md,
// "A new scheduler").
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dialect/in_job.h"
#include "dialect/job_state.h"
#include "site/profile.h"
#include "site/profile_yaml.h"
#include "util/command.h"

namespace hpclaunch {

// What a batch job asks of its scheduler: the part of the plan (plan/plan.h's LaunchPlan, which extends it) that
// a dialect spells as directives.
struct BatchRequest {
  SiteProfile site;
  LaunchMode launcher = LaunchMode::srun;
  int nodes = 1;
  int gpus_per_node = 0;
  int workers_per_node = 1;   // processes doing the training on each node
  int ntasks = 1;             // scheduler tasks: nodes (agent) or nodes * workers (srun, mpirun)
  int ntasks_per_node = 1;
  int cpus_per_task = 1;      // logical CPUs, as --cpus-per-task counts them
  int cpus_per_node = 1;      // logical CPUs asked for on each node
  int threads_per_worker = 1; // OMP_NUM_THREADS: physical cores per worker
  long time_s = 0;
  std::string job_name;
  std::string account;
  std::string partition;      // as requested (partition or PBS queue)
  std::string qos;
  std::string constraint;
  std::string memory;         // the memory directive: "--mem=0", "--mem-per-gpu=281G", PBS "mem=58GB" (the chunk's), or ""
  long memory_mb_per_node = 0; // what that asks of each node, in MB; 0: nothing, or the whole node (--mem=0)
  std::vector<std::string> directives;  // the profile's directives and those made from the account
  std::string container_image;
  // Before the time limit (or on preemption) Slurm sends warning_signal to the batch script, which passes it
  // to the launch step and, if requeue is on, requeues the job up to max_requeues times.
  std::string warning_signal;     // "" when no warning is asked for
  int warning_seconds = 0;
  bool requeue = false;
  // Spare nodes (agent launch): `nodes` holds them too; the agents run workers on nodes - spares of them and the
  // rest wait to take a lost or hung node's place (docs/agent.md, "Spare nodes").
  int spares = 0;
  // Block topology (Slurm): nodes per segment (0: none), and the options that go with it ("--exclusive=topo", ...).
  int segment = 0;
  std::vector<std::string> topology_options;
};

// A memory directive and what it asks of each node (MB; 0: nothing, or the whole node).
struct MemoryAsk {
  std::string directive;
  long mb_per_node = 0;
};

// Where the script runs and writes, for the directives that name them.
struct ScriptPlace {
  std::string workdir;  // where the job starts
  std::string job_dir;  // the job directory
  bool array = false;   // an array job: each task's output in tasks/I
  std::vector<std::string> array_directives;  // array_options of the array
};

// A value a scheduler's own template reads, beside those render gives every template (render/render.h): a text,
// or a flag that opens a `{{#key}}` section. A value with neither (an empty text) opens no section.
struct TemplateValue {
  std::string key;
  std::string text;
  bool flag = false;  // a section's switch, not a text
};

// What a scheduler says of a script it was asked to check without queueing it (sbatch --test-only).
struct TestVerdict {
  bool accepted = false;
  std::string message;  // the scheduler's own words, one line
};

// `--after JOB[:ok|any|notok]`.
enum class DependencyKind { ok, any, notok };
struct Dependency {
  std::string job_id;
  DependencyKind kind = DependencyKind::ok;
};

// `--after` values: "JOB", "JOB:ok", "JOB:any", "JOB:notok". Throws Error naming --after otherwise.
Dependency parse_dependency(const std::string& text);
std::string to_string(const Dependency& d);  // "afterok:123"
// "afterok:1:2,afterany:3": the list Slurm's --dependency= and PBS's -W depend= both take (',' is AND).
std::string dependency_list(const std::vector<Dependency>& after);

// What a scheduler can do, in one record (its dialect's capabilities()). A site profile may only narrow it: a site
// that refuses its scheduler's arrays says `arrays: false`; one cannot give a scheduler what it lacks.
struct SchedulerCapabilities {
  bool arrays = false;          // job arrays (array_options, array_index_variable); without: a job per task
  bool requeue = false;         // runs a job again from its start when its script asks (`--requeue`)
  bool exclude_nodes = false;   // requeues a job so that its next run leaves out named nodes (`exclude --requeue`)
  bool warning_signal = false;  // signals the job's script before its end or preemption (`--signal`)
  bool test_only = false;       // checks a script without queueing it (`submit --check`, sbatch --test-only)
  bool survey = false;          // answers `sites check` and `sites learn` (its backend's survey)
};
// The capabilities' names where `has` holds, as the record declares them ("arrays", "requeue", ...).
std::vector<std::string> capability_names(const SchedulerCapabilities& c);

class SchedulerDialect {
 public:
  virtual ~SchedulerDialect() = default;
  virtual Scheduler kind() const = 0;
  // What it can do (above); every scheduler declares it.
  virtual SchedulerCapabilities capabilities() const = 0;

  // The script's template: launcher/schedulers/NAME/NAME.sh.mustache, compiled into the binary; a dialect with a template of
  // its own (a test's) returns its text.
  virtual std::string template_path() const;
  virtual std::optional<std::string> template_text() const { return std::nullopt; }

  // The launchers it can start, and the GPU request styles its directives write (besides `none`, which asks for
  // nothing): lists of what it can do, so that a launcher or style registered later is one no scheduler takes
  // until its dialect names it. A profile naming another is refused when it is read (scheduler_checks below).
  virtual std::vector<LaunchMode> launchers() const = 0;
  virtual std::vector<GpuStyle> gpu_styles() const = 0;
  bool offers(LaunchMode mode) const;  // one of launchers(), or one a scheduler nesting in this one brings (guest_for)
  bool writes(GpuStyle style) const;  // `none`, or one of gpu_styles()
  // What a profile learned from it (`sites learn`) calls its queues, how it asks for GPUs (`none`: it cannot), and
  // the launchers any cluster of it has (not a site's own, as Cray PALS, which no survey shows).
  virtual QueueKind queue_kind() const { return QueueKind::partition; }
  virtual GpuStyle gpu_style() const { return GpuStyle::none; }
  virtual std::vector<LaunchMode> learned_launchers() const { return launchers(); }
  // What it says inside one of its jobs (dialect/in_job.h): the job's nodes, ranks, GPUs, what it cannot do.
  virtual const InJobFace& in_job() const = 0;
  // Its jobs run on this machine, not on a cluster's nodes (the local runner): a job takes this machine's cores,
  // GPUs and architecture, runs in the foreground unless detached, and an array's tasks run here in turn.
  virtual bool runs_here() const { return false; }
  // The schedulers whose jobs this one's may run inside (Flux in a Slurm allocation), by name; "*": any (the local
  // runner). Inside a job, the innermost scheduler's face is asked first (all_dialects' order); by default none.
  virtual std::vector<std::string> nests_in() const { return {}; }
  bool nests_in_any() const;  // nests_in names "*"
  // Launchers it brings into the jobs of a scheduler it nests in (Flux's `flux run`, in a Slurm allocation after
  // `srun flux start`), and how such a job starts one there: notes for the script and the words before the
  // ranks' command, which the host's template writes in its `{{#hosted}}` section. None by default.
  struct HostedLaunch {
    std::vector<std::string> notes;
    std::string prefix;  // e.g. "srun ... flux start flux run ... \"$HPCLAUNCH\" exec --"
  };
  virtual std::vector<LaunchMode> hosted_launchers() const { return {}; }
  virtual HostedLaunch hosted_launch(const BatchRequest&, const SchedulerDialect& /*host*/) const { return {}; }
  // The dialect that brings `mode` into this one's jobs (it nests in this one and hosts `mode`), or nullptr.
  const SchedulerDialect* guest_for(LaunchMode mode) const;
  // How much earlier than asked the warning may come (seconds; Slurm checks limits every 30 s: up to 60 s early).
  virtual long warning_early_s() const { return 0; }
  // Why this scheduler's agent launch cannot keep spares ("" when it can): its launcher must let the other agents
  // run on when one is lost.
  virtual std::string spares_refusal() const { return ""; }
  // Why a job of a site whose scheduler is at `version` (the profile's scheduler_version; "" unknown) cannot ask
  // for the topology option `option` ("--segment", "--exclusive=topo", ...): "" when it can, or the version is
  // unknown and the option is the scheduler's. By default no scheduler has them.
  virtual std::string topology_option_refusal(std::string_view option, std::string_view version) const;
  // The memory directive by the profile's rule (plan.memory; "" when the site's default is right) and what it asks
  // of each node, for a job of `gpus_per_node` GPUs in `queue` (nullptr: none named). By default none: the
  // scheduler's own default.
  virtual MemoryAsk memory_request(const SiteProfile& site, const Queue* queue, int gpus_per_node) const;

  // The keys of its own block of a site profile (`slurm: {rank_options: [...]}`), each with what it may say; a profile
  // giving another is refused with file:line (scheduler_checks). None by default.
  virtual std::vector<SchedulerOptionSpec> profile_options() const { return {}; }

  // The values its template reads that render does not give every template (its launchers' options: Slurm's
  // `rank_options`, PBS's `pals_cpu_list`, Flux's slot sizes), made from the plan; none by default. A key of
  // render's own is refused (render_script throws), so a template's keys are read in one of two places.
  virtual std::vector<TemplateValue> template_values(const BatchRequest&, const ScriptPlace&) const { return {}; }

  // The script's directives (without the #SBATCH / #PBS prefix, which the template writes).
  virtual std::vector<std::string> directives(const BatchRequest& r, const ScriptPlace& place) const = 0;
  // The directive options asking for tasks 0..count-1 with at most max_concurrent at once (0: no limit), and
  // those holding a job until `after` are done; empty when the scheduler has none.
  virtual std::vector<std::string> array_options(int count, int max_concurrent) const = 0;
  virtual std::vector<std::string> dependency_options(const std::vector<Dependency>& after) const = 0;
  // The environment variable that gives an array task its index; nullptr when the runner sets
  // HPCLAUNCH_ARRAY_TASK itself.
  virtual const char* array_index_variable() const = 0;

  // The scheduler's name for task `task` of the array `array_id` (Slurm 1234_3, PBS 1234[3].server).
  virtual std::string task_job_id(const std::string& array_id, int task) const = 0;
  // A JOB argument naming one task in this scheduler's spelling: the names its array may have, and the task;
  // nullopt when `ref` is not such a name (by default every `ref`: a scheduler without arrays).
  virtual std::optional<std::pair<std::vector<std::string>, int>> split_task_ref(const std::string& ref) const;

  // A command that succeeds only where this scheduler's commands are (`sites learn` finds its login node's scheduler
  // by it, innermost first); empty: none (the local site).
  virtual std::vector<std::string> presence_command() const { return {}; }
  // The command asking the user's default account (empty: the scheduler has none), and its answer read;
  // "" when the answer names none.
  virtual std::vector<std::string> default_account_command(const std::string& user) const;
  virtual std::string parse_default_account(std::string_view out) const;
  // The command listing the accounts and QOS `user` may charge, as a survey asks it (empty: the scheduler keeps no
  // accounts to ask, and `sites check` compares none).
  virtual std::vector<std::string> accounts_command(const std::string&) const { return {}; }
};

// The dialect of `scheduler`, from the registry (site/schedulers.h).
const SchedulerDialect& dialect_for(Scheduler scheduler);
// What a site's jobs can do: its scheduler's capabilities, narrowed by its profile (`arrays: false`).
SchedulerCapabilities capabilities_of(const SiteProfile& site);
// The schedulers that have a capability, by name in all_dialects' order: "slurm or pbs", for a refusal's fix.
std::string schedulers_with(bool SchedulerCapabilities::*capability);
// Every known dialect, innermost first: one that nests in another (nests_in, "*" in all that do not say "*") before
// it, and otherwise in name order. The order faces are asked in inside a job, task references are tried in, and
// schedulers are named in messages. A cycle of nests_in is broken in name order.
std::vector<const SchedulerDialect*> all_dialects();
// register_scheduler's step in this layer (scheduler/backend.h): `name`'s new id, with `dialect`.
Scheduler register_dialect(const std::string& name, const SchedulerDialect& dialect);
// The dialects of the scheduler folders (launcher/schedulers/NAME/ defines NAME_dialect(); the build lists them).
#define HPCLAUNCH_SCHEDULER(name, dialect, backend) const SchedulerDialect& dialect();
#include "hpclaunch_schedulers.def"
#undef HPCLAUNCH_SCHEDULER

// "srun needs local or slurm": why a launcher a dialect does not offer is refused, naming the schedulers that start it.
std::string launcher_needs(LaunchMode mode);
// launcher_needs(mode) when `scheduler`'s dialect does not offer `mode`, else "".
std::string launcher_refusal(Scheduler scheduler, LaunchMode mode);
// "slurm writes no pbs-select request (it writes gpus-per-node, gres or none)" when `scheduler`'s dialect cannot
// write `style`, else "".
std::string gpu_style_refusal(Scheduler scheduler, GpuStyle style);
// The two refusals above: the checks site profiles are read with (site/profile_yaml.h's SchedulerChecks), handed to
// load_sites by its callers, so that a profile names only launchers and GPU styles its scheduler takes.
SchedulerChecks scheduler_checks();

// A scheduler's KEY=VALUE answer (scontrol_fields, a block of qstat -Qf or pbsnodes -av), and its values read:
// a whole number (`fallback` when absent or not one), a text ("" when absent).
using Fields = std::map<std::string, std::string>;
int field_int(const Fields& f, const std::string& key, int fallback = 0);
std::string field_text(const Fields& f, const std::string& key);

// The first non-empty line of a command's stderr (or stdout).
std::string first_line(const ProcessResult& r);
// Throws the Error for a scheduler command that failed: "ARGV: not found on this machine" or "failed (exit N):
// first line of its complaint", with `fix`.
[[noreturn]] void command_failed(const std::vector<std::string>& argv, const ProcessResult& r, const std::string& fix);
// Throws the Error for a submit command (sbatch, qsub) that was not found or refused the job, in its own words.
void throw_if_refused(const char* tool, const ProcessResult& answer);

}  // namespace hpclaunch
