#include "plan/plan.h"

#include <fmt/core.h>

#include <algorithm>
#include <regex>

#include "util/warning_signal.h"
#include "util/time_limit.h"
#include "util/error.h"
#include "util/shell.h"
#include "util/strings.h"

namespace hpclaunch {

namespace {

// The least time a run with a warning signal should have for training before the earliest warning.
constexpr long k_min_training_s = 60;

constexpr long k_default_time_s = 3600;

std::string basename(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// "python3 train.py" is named after train.py; anything else after its program.
std::string default_job_name(const std::vector<std::string>& cmd) {
  static const std::regex k_interpreter("(python[0-9.]*|bash|sh|hpclaunch|env|time)");
  size_t i = 0;
  while (i + 1 < cmd.size() && std::regex_match(basename(cmd[i]), k_interpreter)) {
    size_t next = i + 1;
    while (next + 1 < cmd.size() && !cmd[next].empty() && cmd[next][0] == '-' && cmd[next] != "-c" &&
           cmd[next] != "-m")
      ++next;  // python3 -u train.py
    if (cmd[next] == "-c") break;      // bash -c 'inline code': name it after the interpreter
    if (cmd[next] == "-m") ++next;     // python -m package.module
    i = std::min(next, cmd.size() - 1);
  }
  std::string name = basename(cmd[i]);
  size_t dot = name.rfind('.');
  if (dot != std::string::npos && dot > 0) name = name.substr(0, dot);
  std::string clean;
  for (char c : name) clean += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
  if (clean.size() > 40) clean.resize(40);
  return clean.empty() ? "hpclaunch" : clean;
}

LaunchMode pick_launcher(const JobRequest& r, const SiteProfile& site) {
  if (r.launcher.empty()) return site.default_launcher;
  auto mode = parse_launch_mode(r.launcher);
  if (!mode)
    throw Error("--launcher",
                "unknown launcher '" + r.launcher + "'" + did_you_mean(r.launcher, names_of(launch_mode_names())),
                "use " + join_or(names_of(launch_mode_names())));
  if (!dialect_for(site.scheduler).offers(*mode))
    throw Error("--launcher", launcher_needs(*mode) + ", but " + site.name + " runs " + to_string(site.scheduler),
                std::string("use --launcher ") + to_string(site.default_launcher));
  if (!site.allows(*mode)) {
    std::vector<std::string> names;
    for (auto m : site.launchers) names.push_back(to_string(m));
    throw Error("--launcher", "site " + site.name + " does not offer '" + r.launcher + "'",
                "use one of: " + join(names, ", "));
  }
  return *mode;
}

std::string queue_flag(const Queue& q);

// Whether `q`'s limits allow `nodes` nodes with `gpus` GPUs in all.
bool queue_takes(const Queue& q, int nodes, int gpus) {
  return (!q.max_nodes || nodes <= q.max_nodes) && (!q.max_gpus || gpus <= q.max_gpus) && (!q.min_gpus || gpus >= q.min_gpus);
}

// The queue the job goes to (or nullptr when the site lists none to check against), from --partition/--qos.
const Queue* pick_queue(const JobRequest& r, const SiteProfile& site, LaunchPlan* plan) {
  auto names_of = [&](std::initializer_list<QueueKind> kinds) {
    std::vector<std::string> names;
    for (const auto& q : site.queues)
      if (std::find(kinds.begin(), kinds.end(), q.kind) != kinds.end()) names.push_back(q.name);
    return names;
  };
  auto lookup = [&](const std::string& flag, const std::string& value, std::initializer_list<QueueKind> kinds) -> const Queue* {
    auto names = names_of(kinds);
    if (names.empty()) return nullptr;  // the site lists none of this kind: pass the value through
    for (const auto& q : site.queues)
      if (q.name == value && std::find(kinds.begin(), kinds.end(), q.kind) != kinds.end()) return &q;
    throw Error(flag, "site " + site.name + " has no " + flag.substr(2) + " '" + value + "'" + did_you_mean(value, names),
                "use one of: " + join(names, ", "));
  };
  plan->partition = r.partition;
  plan->qos = r.qos;
  const Queue* chosen = nullptr;
  if (!r.partition.empty()) chosen = lookup("--partition", r.partition, {QueueKind::partition, QueueKind::queue});
  if (!r.qos.empty()) {
    const Queue* q = lookup("--qos", r.qos, {QueueKind::qos});
    if (q) chosen = q;
  }
  if (r.partition.empty() && r.qos.empty()) {
    chosen = site.default_queue();
    // The default queue may refuse this job (Roihu's gpumedium: 4 GPUs per job); then the first listed queue of
    // the same kind that takes it, with its note (an access condition) said.
    const int gpus = r.nodes * r.gpus_per_node.value_or(site.node.gpus);
    if (chosen && !queue_takes(*chosen, r.nodes, gpus))
      for (const auto& q : site.queues)
        if (q.kind == chosen->kind && queue_takes(q, r.nodes, gpus)) {
          plan->warnings.push_back(fmt::format("{} {} takes {} node(s) x {} GPU(s), which {} does not{}",
                                               queue_flag(q).substr(2), q.name, r.nodes, gpus / std::max(1, r.nodes),
                                               chosen->name, q.note.empty() ? "" : ": " + q.note));
          chosen = &q;
          break;
        }
    if (chosen && (chosen->kind == QueueKind::partition || chosen->kind == QueueKind::queue)) plan->partition = chosen->name;
    if (chosen && chosen->kind == QueueKind::qos) plan->qos = chosen->name;
  }
  return chosen;
}

std::string queue_flag(const Queue& q) {
  switch (q.kind) {
    case QueueKind::qos: return "--qos";
    case QueueKind::automatic: return "--time";
    default: return "--partition";
  }
}

// The account to charge: --account, else the user's default account when the site needs one. A name that does
// not look like the site's accounts is only a warning: the scheduler knows better (NERSC's own seed uses nstaff).
void plan_account(const JobRequest& r, const SiteProfile& site, LaunchPlan* p) {
  const AccountRule& rule = site.account;
  std::string example = rule.example.empty() ? "" : " " + rule.example;
  p->account = r.account;
  if (p->account.empty()) {
    if (!r.default_account.empty())
      p->warnings.push_back("no --account: the job is charged to your default account " + r.default_account);
    if (!rule.required) return;
    if (r.default_account.empty())
      throw Error("--account", site.name + " requires an account", "add --account" + (example.empty() ? " NAME" : example));
    p->account = r.default_account;
  }
  if (!rule.pattern.empty() && !std::regex_match(p->account, std::regex(rule.pattern)))
    p->warnings.push_back("'" + p->account + "' does not look like a " + site.name + " account (" + rule.pattern +
                          (example.empty() ? "" : ", e.g." + example) + "); submitting it anyway");
}

// The profile's directives, then those made from the account (Gadi's -l storage=), each unless a profile directive
// sets the same option; a default made this way is said in the script, with how to change it.
void plan_directives(const SiteProfile& site, LaunchPlan* p) {
  p->directives = site.directives;
  if (p->account.empty()) return;
  auto option = [](const std::string& d) { return d.substr(0, d.find('=')); };
  for (const auto& tmpl : site.account_directives) {
    std::string d = replace_all(tmpl, "{account}", p->account);
    if (std::any_of(site.directives.begin(), site.directives.end(), [&](const std::string& x) { return option(x) == option(d); }))
      continue;
    p->directives.push_back(d);
    p->script_notes.push_back(fmt::format("'{}' is made from the account {}: to change it, put your own '{}=...' in the "
                                          "`directives:` of a site file (--site-file) that extends {}.",
                                          d, p->account, option(d), site.name));
  }
}

EnvList parse_env(const std::vector<std::string>& items) {
  EnvList out;
  for (const auto& item : items) {
    size_t eq = item.find('=');
    if (eq == std::string::npos)
      throw Error("--env", "'" + item + "' has no '='", "write --env NAME=VALUE");
    std::string key = item.substr(0, eq);
    if (!is_env_name(key))
      throw Error("--env", "'" + key + "' is not a variable name", "use letters, digits and _, not starting with a digit");
    out.emplace_back(key, item.substr(eq + 1));
  }
  return out;
}

bool has_key(const EnvList& env, const std::string& key) {
  return std::any_of(env.begin(), env.end(), [&](const auto& kv) { return kv.first == key; });
}

void plan_geometry(const JobRequest& r, const SiteProfile& site, LaunchPlan* p) {
  const NodeShape& node = site.node;
  int gpus = r.gpus_per_node.value_or(node.gpus);
  if (gpus < 0) throw Error("--gpus-per-node", fmt::format("{} is below 0", gpus), "use 0 for a CPU job or up to " + std::to_string(node.gpus));
  if (gpus > node.gpus)
    throw Error("--gpus-per-node", fmt::format("{} is more than the {} GPUs of a {} node", gpus, node.gpus, site.name),
                fmt::format("use --gpus-per-node {} or fewer and more --nodes", node.gpus));
  const auto& choices = site.gpu.gpus_per_node_choices;
  if (gpus > 0 && !choices.empty() && std::find(choices.begin(), choices.end(), gpus) == choices.end()) {
    std::vector<std::string> names;
    for (int c : choices) names.push_back(std::to_string(c));
    throw Error("--gpus-per-node", fmt::format("{} GPUs of a node cannot be asked for on {}", gpus, site.name),
                "use --gpus-per-node " + join(names, " or "));
  }
  p->gpus_per_node = gpus;
  p->workers_per_node = std::max(gpus, 1);
  // A job with a share of a node's GPUs gets the same share of its cores (sites cap CPUs per GPU).
  int cores = node.gpus > 0 && gpus > 0 ? std::max(1, node.cores * gpus / node.gpus) : node.cores;
  int cpus = cores * node.threads_per_core;
  if (site.gpu.max_cpus_per_gpu > 0 && gpus > 0) {
    int cap = site.gpu.max_cpus_per_gpu * gpus;
    if (cpus > cap) {
      cpus = cap;
      cores = std::max(1, cap / node.threads_per_core);
    }
  }
  if (cores < p->workers_per_node)
    throw Error("--gpus-per-node", fmt::format("{} workers need at least {} cores, a {} node gives {}", p->workers_per_node,
                                               p->workers_per_node, site.name, cores),
                "use fewer GPUs per node");
  p->cpus_per_node = cpus;
  p->threads_per_worker = std::max(1, cores / p->workers_per_node);
  if (launch_tasks(p->launcher) == LaunchTasks::per_node) {
    p->ntasks_per_node = 1;
    p->cpus_per_task = cpus;
  } else {
    p->ntasks_per_node = p->workers_per_node;
    p->cpus_per_task = std::max(1, cpus / p->workers_per_node);
  }
  p->ntasks = p->nodes * p->ntasks_per_node;
}

// How many CPU sets a per-rank binding gives (srun's --cpu-bind=[verbose,]mask_cpu:M,M or map_cpu:C,C; PALS's
// list:A:B), or 0 when it names none. Fewer sets than ranks on a node would put two ranks on one set.
int cpu_sets(const std::string& option) {
  static const std::regex k_srun("--cpu-bind=(?:v(?:erbose)?,)?(?:mask_cpu|map_cpu|mask_ldom|map_ldom)[:=](.*)");
  std::smatch m;
  if (std::regex_match(option, m, k_srun)) return static_cast<int>(split(m[1].str(), ',').size());
  if (option.rfind("list:", 0) == 0) return static_cast<int>(split(option.substr(5), ':').size());
  return 0;
}

// Bindings that name a whole node's CPUs hold only where the job has its nodes to itself: on a queue that shares
// nodes they are left out (LUMI: "Binding only applies if you have a full-node allocation", lumig-job.md).
// Which options those are, the scheduler's dialect declares (SchedulerOptionSpec::whole_node).
void plan_whole_node_bindings(const Queue* queue, LaunchPlan* p) {
  SiteProfile& site = p->site;
  if (!queue || !queue->shared) return;
  bool dropped = false;  // one that bound this launch's ranks
  for (const SchedulerOptionSpec& spec : dialect_for(site.scheduler).profile_options())
    if (spec.whole_node && site.scheduler_options.erase(spec.key))
      dropped = dropped || !spec.launcher || spec.launcher == p->launcher;
  if (dropped)
    p->script_notes.push_back(fmt::format("{} shares its nodes between jobs: the profile's whole-node CPU binding is "
                                          "left out (sites show {})", queue->name, site.name));
}

// A job that asks the scheduler for no GPUs of its own (gpu_request: none: Aurora's `select=N`) is given none, and
// no list of them: binding its ranks by local rank numbers the node's GPUs from 0. On a queue that shares nodes
// (Aurora's debug: "non-exclusive", running-jobs-aurora.md) another job may hold those, so there the job binds from
// what it was given only when that is the whole node.
void check_shared_node_gpus(const Queue* queue, const LaunchPlan& p) {
  const SiteProfile& site = p.site;
  if (!queue || !queue->shared || site.gpu.style != GpuStyle::none || site.gpu_bind != GpuBind::local_rank) return;
  if (p.gpus_per_node == 0 || site.node.gpus == 0 || p.gpus_per_node >= site.node.gpus) return;
  throw Error("--gpus-per-node",
              fmt::format("{} shares its nodes between jobs and {} asks the scheduler for no GPUs of a job's own "
                          "(gpu_request: none), so binding {} of a node's {} by local rank could take another job's",
                          queue->name, site.name, p.gpus_per_node, site.node.gpus),
              fmt::format("use --gpus-per-node {} (whole nodes), or another queue (`hpclaunch sites show {}`)",
                          site.node.gpus, site.name));
}

// The profile's per-rank options against the plan's geometry: each rank of a node needs a CPU set of its own. They
// are the scheduler's options that bind this launch's ranks (SchedulerOptionSpec::launcher).
void check_rank_binding(const SiteProfile& site, const LaunchPlan& p) {
  std::vector<std::string> bindings;
  for (const SchedulerOptionSpec& spec : dialect_for(site.scheduler).profile_options())
    if (spec.launcher == p.launcher)
      for (const auto& v : site.scheduler_option(spec.key)) bindings.push_back(v);
  for (const auto& b : bindings)
    if (int sets = cpu_sets(b); sets > 0 && sets < p.ntasks_per_node)
      throw Error("--gpus-per-node",
                  fmt::format("{}'s per-rank CPU binding '{}' has {} CPU set(s) for the {} ranks of a node", site.name,
                              b, sets, p.ntasks_per_node),
                  fmt::format("use --gpus-per-node {} or fewer, or fix the profile's binding (sites show {})", sets,
                              site.name));
}

// Block topology: the segment size (--segment, else the queue's), which the allocation's node count must be a
// multiple of, and the queue's segment options; each option checked against the site's scheduler and its release.
void plan_topology(const JobRequest& r, const SiteProfile& site, const Queue* queue, LaunchPlan* p) {
  const SchedulerDialect& dialect = dialect_for(site.scheduler);
  p->segment = r.segment.value_or(queue ? queue->segment : 0);
  if (p->segment < 0) throw Error("--segment", fmt::format("{} is below 0", p->segment), "give the nodes of a segment, e.g. --segment 18");
  std::vector<std::string> options;
  if (p->segment > 0) {
    if (std::string why = dialect.topology_option_refusal("--segment", site.scheduler_version); !why.empty())
      throw Error("--segment", why, "drop --segment (or the queue's `segment:`), or fix the profile's scheduler_version");
    if (p->nodes % p->segment != 0) {
      const int below = p->nodes / p->segment * p->segment, above = below + p->segment;
      const std::string fix = below > p->spares ? fmt::format("use --nodes {} or {}", below - p->spares, above - p->spares)
                                                : fmt::format("use --nodes {}", above - p->spares);
      throw Error("--segment",
                  fmt::format("{} node(s){} are not a multiple of the segment size {}", p->nodes,
                              p->spares ? fmt::format(" ({} and {} spare(s))", p->nodes - p->spares, p->spares) : "",
                              p->segment),
                  fix + ", or a --segment that divides " + std::to_string(p->nodes));
    }
    if (queue) options = queue->segment_options;
  }
  if (r.exclusive_topo.value_or(false) &&
      std::find(options.begin(), options.end(), "--exclusive=topo") == options.end())
    options.push_back("--exclusive=topo");
  for (const auto& o : options)
    if (std::string why = dialect.topology_option_refusal(o, site.scheduler_version); !why.empty())
      throw Error(o == "--exclusive=topo" && r.exclusive_topo.value_or(false) ? "--exclusive-topo" : "--segment", why,
                  "leave it out, or fix the profile (sites show " + site.name + ")");
  p->topology_options = options;
}

void plan_time(const JobRequest& r, const SiteProfile& site, const Queue* queue, LaunchPlan* p) {
  long max = queue ? queue_max_time(*queue, r.nodes) : 0;
  std::string which = queue ? queue->name : "";
  if (queue && max != queue->max_time_s) which += fmt::format(" for {} node(s)", r.nodes);
  if (r.time.empty()) {
    p->time_s = max ? std::min(max, k_default_time_s) : k_default_time_s;
    return;
  }
  auto t = parse_time_limit(r.time);
  if (!t) throw Error("--time", "'" + r.time + "' is not a time limit", "use MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS");
  if (max && *t > max)
    throw Error("--time", fmt::format("{} is more than the {} limit of {} on {}", format_slurm_time(*t),
                                      format_slurm_time(max), which, site.name),
                fmt::format("use --time {} or less{}", format_slurm_time(max),
                            queue->kind == QueueKind::automatic ? "" : ", or another " + queue_flag(*queue).substr(2)));
  p->time_s = *t;
}

// What the scheduler cannot do of what requeueing needs (a warning signal before the end, and running the job
// again), in words: "sends no warning signal and ..."; "" when it can do both. Leaving out bad nodes is the
// preflight's and the agents' (below, and the Slurm script), not every requeue's.
std::string requeue_missing(const SchedulerCapabilities& can) {
  std::vector<std::string> cannot;
  if (!can.warning_signal) cannot.push_back("sends no warning signal");
  if (!can.requeue) cannot.push_back("cannot requeue a job");
  return join(cannot, " and ");
}

void plan_requeue(const JobRequest& r, const SiteProfile& site, LaunchPlan* p) {
  const RequeuePolicy& policy = site.requeue;
  const SchedulerCapabilities can = capabilities_of(site);
  const std::string missing = requeue_missing(can);
  bool asked = r.requeue.value_or(false) || !r.signal.empty() || r.max_requeues.has_value();
  if (asked && !missing.empty() && r.requeue.value_or(true))
    throw Error(r.signal.empty() ? "--requeue" : "--signal",
                fmt::format("{} runs {}, which {}", site.name, to_string(site.scheduler), missing),
                "drop the flag; resume by hand with the trainer's --resume");
  if (!missing.empty() && policy.enabled && !asked)  // a profile's requeue: a line, not a script part that does nothing
    p->warnings.push_back(fmt::format("{}'s profile asks for requeueing, but {} {}: the script has no requeue",
                                      site.name, to_string(site.scheduler), missing));
  // A failed preflight on Slurm requeues the job without the bad nodes; where the face cannot, the job just ends.
  if (p->preflight && !can.exclude_nodes)
    p->warnings.push_back(fmt::format(
        "--preflight: {} cannot requeue a job without its bad nodes, so a failed preflight ends the job; "
        "`hpclaunch status` names the nodes, and the job must be submitted again",
        to_string(site.scheduler)));
  p->requeue = missing.empty() && r.requeue.value_or(policy.enabled);
  p->max_requeues = r.max_requeues.value_or(policy.max_requeues);
  if (p->max_requeues < 0) throw Error("--max-requeues", "is below 0", "use 0 or more");
  if (!p->requeue && r.signal.empty()) return;
  std::string name = policy.signal;
  int seconds = policy.seconds;
  std::string err;
  if (!r.signal.empty() && !parse_warning_signal(r.signal, &name, &seconds, &err))
    throw Error("--signal", err, "write e.g. --signal USR1@120");
  if (seconds >= p->time_s)
    throw Error("--signal", fmt::format("the warning {} s before the end would come before the job starts (--time is {} s)",
                                        seconds, p->time_s),
                fmt::format("use --signal {}@{} or less, or a longer --time", name, std::max<long>(1, p->time_s / 2)));
  p->warning_signal = name;
  p->warning_seconds = seconds;
  const long early_s = dialect_for(site.scheduler).warning_early_s();
  const long earliest_s = p->time_s - seconds - early_s;  // into a run
  if (earliest_s < k_min_training_s)
    p->warnings.push_back(fmt::format(
        "--signal: Slurm may send the warning up to {} s early, so with --time {} s and the warning {} s before the "
        "end it can come {} s into every run; ask for --time {} s or more to leave each run time to train",
        early_s, p->time_s, seconds, std::max<long>(0, earliest_s), seconds + early_s + k_min_training_s));
}

}  // namespace

long queue_max_time(const Queue& queue, int nodes) {
  long max = queue.max_time_s;
  for (const auto& [least, t] : queue.max_time_by_nodes)
    if (nodes >= least) max = t;
  return max;
}

void check_submittable(const LaunchPlan& plan) {
  const SiteProfile& site = plan.site;
  if (!site.retired()) return;
  std::string when = site.retired_on.empty() ? "" : " on " + site.retired_on;
  throw Error("--site", site.name + " was retired" + when + ": a job sent there is never run",
              "use --site " + join(site.successors, " or --site ") + " (render and --dry-run still show " + site.name + "'s script)");
}

std::string check_job_dir_location(const SiteProfile& site, const std::string& job_dir, const std::string& scratch_dir) {
  if (!site.scratch_only || site.scratch.empty()) return "";
  const std::string& var = site.scratch.front();
  if (scratch_dir.empty())
    return fmt::format("{}'s compute nodes write only under ${}, which is not set here: check that {} is under it",
                       site.name, var, job_dir);
  std::string root = scratch_dir.back() == '/' ? scratch_dir : scratch_dir + "/";
  if ((job_dir + "/").rfind(root, 0) == 0) return "";
  throw Error("--job-dir", fmt::format("{} is outside ${} ({}): {}'s compute nodes cannot write there, so the job's "
                                       "output and checkpoints would be lost", job_dir, var, scratch_dir, site.name),
              fmt::format("submit from ${} (cd ${}) or pass --job-dir ${}/...", var, var, var));
}

std::optional<LaunchMode> parse_launch_mode(const std::string& name) { return launch_mode_named(name); }

// --hang-timeout, else the profile's requeue.hang_timeout: the agent's (HPCLAUNCH_HANG_TIMEOUT, which a user's own
// --env setting of it overrides). Only the agent watches for hangs; srun, mpirun and pals start the command itself.
void plan_hang(const JobRequest& r, const SiteProfile& site, LaunchPlan* p) {
  const int seconds = r.hang_timeout.value_or(site.requeue.hang_timeout);
  if (seconds < 0) throw Error("--hang-timeout", fmt::format("{} is below 0", seconds), "use 0 (off) or more seconds");
  if (seconds == 0) return;
  if (p->launcher != LaunchMode::agent) {
    if (r.hang_timeout)
      throw Error("--hang-timeout", fmt::format("the {} launch starts the command itself: only the agent watches for "
                                                "hangs", to_string(p->launcher)),
                  "use --launcher agent, or drop --hang-timeout");
    return;  // the profile's default is for its agent jobs
  }
  if (!has_key(p->env, "HPCLAUNCH_HANG_TIMEOUT")) p->env.emplace_back("HPCLAUNCH_HANG_TIMEOUT", std::to_string(seconds));
}

// --spares, else the profile's requeue.spares: nodes beyond --nodes in the allocation, for the agents (which alone
// can let a node wait and give it a place); the allocation is asked for all of them.
int plan_spares(const JobRequest& r, const SiteProfile& site, LaunchMode launcher) {
  const int spares = r.spares.value_or(site.requeue.spares);
  if (spares < 0) throw Error("--spares", fmt::format("{} is below 0", spares), "use 0 (none) or more nodes");
  if (spares == 0) return 0;
  const bool agent = launcher == LaunchMode::agent;
  const std::string why = agent ? dialect_for(site.scheduler).spares_refusal()
                                : fmt::format("the {} launch starts every rank at once: only the agent can hold a "
                                              "node back as a spare", to_string(launcher));
  if (why.empty()) return spares;
  if (!r.spares) return 0;  // the profile's default is for the agent jobs that can keep spares
  throw Error("--spares", why, agent ? "drop --spares (a lost node then ends the run, and --requeue starts it again)"
                                     : "use --launcher agent, or drop --spares");
}

// A command that is torchrun itself (`torchrun`, `python -m torch.distributed.run` or `.launch`, `hpclaunch
// torchrun`) would be started once per worker slot, each starting its own workers: a world of the wrong size that
// may even finish. Refused, saying how to write it: the launch is torchrun's job already.
void check_not_torchrun(const std::vector<std::string>& command) {
  const std::string prog = command[0].substr(command[0].rfind('/') + 1);
  std::string what;
  if (prog == "torchrun") what = "torchrun";
  if (prog.rfind("python", 0) == 0)
    for (size_t i = 1; i + 1 < command.size(); ++i)
      if (command[i] == "-m" && (command[i + 1] == "torch.distributed.run" || command[i + 1] == "torch.distributed.launch"))
        what = "python -m " + command[i + 1];
  if (prog == "hpclaunch" && command.size() > 1 && (command[1] == "torchrun" || command[1] == "agent"))
    what = "hpclaunch " + command[1];
  if (what.empty()) return;
  throw Error("--", fmt::format("the command is {}, which starts its own workers, but the job's launch starts a copy of "
                                "it in every worker slot: the world would be the wrong size", what),
              "drop it and its flags and give the script, `-- python SCRIPT ARG...`: the agent launch does torchrun's "
              "job (--gpus-per-node is its --nproc-per-node)");
}

LaunchPlan make_plan(const JobRequest& request, const SiteProfile& site) {
  LaunchPlan p;
  p.site = site;
  if (request.command.empty()) throw Error("--", "no command to run", "put the command after `--`, e.g. `-- python train.py`");
  if (request.command[0].empty()) throw Error("--", "the command's name is empty", "put the program after `--`");
  if (request.nodes < 1) throw Error("--nodes", fmt::format("{} is below 1", request.nodes), "use --nodes 1 or more");
  check_not_torchrun(request.command);
  p.launcher = pick_launcher(request, site);
  p.spares = plan_spares(request, site, p.launcher);
  JobRequest r = request;  // from here on the nodes are the allocation's, the spares' included
  r.nodes += p.spares;
  p.nodes = r.nodes;
  const Queue* queue = pick_queue(r, site, &p);
  if (queue && queue->max_nodes && r.nodes > queue->max_nodes)
    throw Error("--nodes", fmt::format("{} is more than the {} nodes {} allows on {}", r.nodes, queue->max_nodes, queue->name, site.name),
                fmt::format("use --nodes {} or fewer{}", queue->max_nodes,
                            queue->kind == QueueKind::automatic ? "" : ", or another " + queue_flag(*queue).substr(2)));
  plan_geometry(r, site, &p);
  plan_whole_node_bindings(queue, &p);
  check_shared_node_gpus(queue, p);
  check_rank_binding(p.site, p);
  if (queue && !queue_takes(*queue, r.nodes, r.nodes * p.gpus_per_node))
    throw Error(queue_flag(*queue),
                fmt::format("{} takes {}{} GPUs per job; this job asks {} ({} node(s) x {})", queue->name,
                            queue->min_gpus ? fmt::format("at least {}", queue->min_gpus) : "",
                            queue->max_gpus ? fmt::format("{}at most {}", queue->min_gpus ? " and " : "", queue->max_gpus) : "",
                            r.nodes * p.gpus_per_node, r.nodes, p.gpus_per_node),
                "use another " + queue_flag(*queue).substr(2) + " (`hpclaunch sites show " + site.name + "`), or change --nodes/--gpus-per-node");
  plan_time(r, site, queue, &p);
  plan_topology(r, site, queue, &p);
  plan_account(r, site, &p);
  p.preflight = r.preflight.value_or(false);
  plan_requeue(r, site, &p);
  const MemoryAsk memory = dialect_for(site.scheduler).memory_request(site, queue, p.gpus_per_node);
  p.memory = memory.directive;
  p.memory_mb_per_node = memory.mb_per_node;
  plan_directives(site, &p);
  p.constraint = r.constraint.empty() ? site.gpu.constraint : r.constraint;
  p.job_name = r.name.empty() ? default_job_name(r.command) : r.name;
  if (p.job_name.find('\n') != std::string::npos) throw Error("--name", "the job name has a newline", "use a one-line name");

  p.modules = site.modules;
  if (p.launcher == LaunchMode::mpirun)
    p.modules.insert(p.modules.end(), site.mpirun_modules.begin(), site.mpirun_modules.end());
  p.user_command = r.command;
  p.command = r.command;
  if (!r.container.empty()) {
    if (site.container.runtime.empty())
      throw Error("--container", "site " + site.name + " has no container runtime in its profile",
                  "drop --container, or add `container:` to the profile with --site-file");
    p.container_image = r.container;
    p.site.container = container_for_image(site.container, r.container);
    // The container sets the network's variables: the site's host values would override them.
    if (site.container.sets_network_env) p.site.interconnect.env.clear();
    p.modules.insert(p.modules.end(), site.container.modules.begin(), site.container.modules.end());
    if (!site.container.srun_options.empty() && p.launcher != LaunchMode::srun && p.launcher != LaunchMode::agent)
      throw Error("--container", fmt::format("{} runs containers as options of srun steps ({}), which the {} launch "
                                             "does not start", site.name, site.container.runtime, to_string(p.launcher)),
                  "use --launcher srun or --launcher agent");
    const std::string gpu_flag = device_visibility(site.node.accelerator).container_gpu_flag;
    std::vector<std::string> wrapped;
    for (const auto& w : site.container.wrap)
      if (std::string arg = replace_all(replace_all(w, "{image}", r.container), "{gpu_flag}", gpu_flag); !arg.empty())
        wrapped.push_back(arg);  // {gpu_flag} alone, for a vendor with none, is no argument
    wrapped.insert(wrapped.end(), r.command.begin(), r.command.end());
    p.command = wrapped;
  }
  for (const auto& m : r.modules) {
    if (m.empty() || m.find_first_of(" \t\n'\"$`;&|<>") != std::string::npos)
      throw Error("--module", "'" + m + "' is not a module name", "give one module per --module, e.g. --module pytorch/2.1");
    p.modules.push_back(m);
  }

  p.array = expand_array(r.array);
  if (p.array.active()) {
    task_command(p.command, p.array, p.array.tasks.front(), "JOBDIR/tasks/0");  // an unknown {name} stops here
    check_task_outputs(p.command, p.array);
  }

  EnvList user_env = parse_env(r.env);
  for (const auto& bad : site.interconnect.never_set)
    if (has_key(user_env, bad.name))
      throw Error("--env", fmt::format("{} must not be set on {}: {}", bad.name, site.name, bad.reason),
                  "drop --env " + bad.name);
  p.env = site.env;
  if (!has_key(user_env, "OMP_NUM_THREADS")) p.env.emplace_back("OMP_NUM_THREADS", std::to_string(p.threads_per_worker));
  p.env.insert(p.env.end(), user_env.begin(), user_env.end());
  plan_hang(r, site, &p);

  for (const auto& n : site.notices)
    if (p.nodes >= n.min_nodes) p.warnings.push_back(site.name + ": " + n.text);
  if (p.array.active() && !capabilities_of(site).arrays)
    p.warnings.push_back(fmt::format("{} refuses job arrays: submit sends each of the {} tasks as a job of its own{}",
                                     site.name, p.array.count(),
                                     p.array.max_concurrent > 0
                                         ? fmt::format(", each waiting for the one {} before it (at most {} at once)",
                                                       p.array.max_concurrent, p.array.max_concurrent)
                                         : ""));
  if (site.retired()) {
    std::string when = site.retired_on.empty() ? "" : " on " + site.retired_on;
    p.warnings.push_back(site.name + " was retired" + when + "; consider " + join(site.successors, " or ") +
                         " (--site " + site.successors.front() + ")");
  }
  return p;
}

}  // namespace hpclaunch
