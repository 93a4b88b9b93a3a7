#include "render/render.h"

#include <fmt/core.h>
#include <kainjow/mustache.hpp>

#include <algorithm>

#include "util/embedded.h"
#include "util/error.h"
#include "util/shell.h"
#include "util/strings.h"

namespace hpclaunch {

namespace mus = kainjow::mustache;

namespace {

mus::data list_of(const std::vector<std::string>& items) {
  mus::data list{mus::data::type::list};
  for (const auto& i : items) list << mus::data(i);
  return list;
}

// The rendezvous rule for the in-job runtime (docs/CONTRACTS.md), then the profile's and user's variables.
bool has_env(const EnvList& env, const std::string& name) {
  return std::any_of(env.begin(), env.end(), [&](const auto& kv) { return kv.first == name; });
}

EnvList script_env(const LaunchPlan& p, const RenderContext& ctx) {
  const Rendezvous& z = p.site.rendezvous;
  EnvList env = {{"HPCLAUNCH_MASTER_ADDR_RULE", to_string(z.master_addr)}};
  if (!z.suffix.empty()) env.emplace_back("HPCLAUNCH_MASTER_ADDR_SUFFIX", z.suffix);
  env.emplace_back("HPCLAUNCH_MASTER_ADDR_RESOLVE", z.resolve ? "1" : "0");
  if (z.master_addr == MasterAddrRule::fixed) env.emplace_back("HPCLAUNCH_MASTER_ADDR_FIXED", z.fixed_addr);
  if (z.port) env.emplace_back("HPCLAUNCH_MASTER_PORT", std::to_string(z.port));
  env.emplace_back("HPCLAUNCH_GPU_BIND", to_string(p.site.gpu_bind));
  // Read by the tasks' binding and the preflight's GPU count; NVIDIA, the default, needs no line.
  if (p.site.node.accelerator != Accelerator::nvidia)
    env.emplace_back("HPCLAUNCH_ACCELERATOR", to_string(p.site.node.accelerator));
  if (!p.array.active()) env.emplace_back("HPCLAUNCH_JOB_DIR", ctx.job_dir);  // an array task's: array_lines
  env.insert(env.end(), p.env.begin(), p.env.end());
  return env;
}

// The script's array section: which task this is, its run directory, its sweep variables and its command
// (hpclaunch_command, which the launch line runs), one `case` branch per task.
std::vector<std::string> array_lines(const LaunchPlan& p, const RenderContext& ctx, const SchedulerDialect& dialect) {
  const ArrayPlan& a = p.array;
  const std::string range = fmt::format("0-{}", a.count() - 1);
  std::vector<std::string> out = {
      fmt::format("# An array of {} task(s) ({}): each runs its own command in its own directory, tasks/I.", a.count(), range)};
  if (const char* var = dialect.array_index_variable())
    out.push_back(fmt::format("export HPCLAUNCH_ARRAY_TASK=\"${}\"", var));
  out.push_back(fmt::format("export HPCLAUNCH_ARRAY_TASKS={}", a.count()));
  out.push_back("export HPCLAUNCH_ARRAY_DIR=" + shell_quote(ctx.job_dir));
  out.push_back("export HPCLAUNCH_JOB_DIR=\"$HPCLAUNCH_ARRAY_DIR/tasks/$HPCLAUNCH_ARRAY_TASK\"");
  out.push_back("case \"$HPCLAUNCH_ARRAY_TASK\" in");
  for (const auto& t : a.tasks) {
    std::string line = fmt::format("  {})", t.index);
    std::vector<std::string> vars;
    for (const auto& [k, v] : task_env(t)) vars.push_back(k + "=" + shell_quote(v));
    if (!vars.empty()) line += " export " + join(vars, " ") + ";";
    line += " hpclaunch_command=(" + shell_join(task_command(p.command, a, t, task_dir(ctx.job_dir, t.index))) + ") ;;";
    out.push_back(line);
  }
  out.push_back(fmt::format("  *) echo \"hpclaunch: task '$HPCLAUNCH_ARRAY_TASK' is not one of this array's ({})\" >&2; exit 1 ;;", range));
  out.insert(out.end(), {"esac", ""});
  return out;
}

std::string load_template(const SchedulerDialect& dialect) {
  if (auto own = dialect.template_text()) return *own;
  std::string path = dialect.template_path();
  auto text = find_embedded(path);
  if (!text) throw failure(path, "template missing from this build", "rebuild hpclaunch");
  return std::string(*text);
}

}  // namespace

std::string template_path(Scheduler s) { return dialect_for(s).template_path(); }

std::string render_script(const LaunchPlan& p, const RenderContext& ctx) {
  return render_script(p, ctx, dialect_for(p.site.scheduler));
}

std::string render_script(const LaunchPlan& p, const RenderContext& ctx, const SchedulerDialect& dialect) {
  mus::data d;
  d.set("version", HPCLAUNCH_VERSION);
  d.set("site", p.site.name);
  d.set("site_title", p.site.title);
  d.set("launcher", to_string(p.launcher));
  d.set("nodes", std::to_string(p.nodes));
  d.set("gpus_per_node", std::to_string(p.gpus_per_node));
  d.set("workers_per_node", std::to_string(p.workers_per_node));
  d.set("run_nodes", std::to_string(p.nodes - p.spares));  // the agents' --nnodes: the nodes that run workers
  if (p.spares > 0) d.set("spares", std::to_string(p.spares));
  d.set("world_size", std::to_string((p.nodes - p.spares) * p.workers_per_node));
  d.set("ntasks", std::to_string(p.ntasks));
  d.set("ntasks_per_node", std::to_string(p.ntasks_per_node));
  d.set("cpus_per_task", std::to_string(p.cpus_per_task));
  d.set("threads_per_worker", std::to_string(p.threads_per_worker));
  d.set("hpclaunch", shell_quote(ctx.hpclaunch));
  d.set("workdir", shell_quote(ctx.workdir));
  d.set("snapshot", ctx.snapshot);
  d.set("job_dir", shell_quote(ctx.job_dir));
  d.set(to_string(p.launcher), true);
  // A launcher another scheduler brings into this one's jobs (Flux's flux run under `srun flux start`): its lines.
  if (const SchedulerDialect* guest = dialect.guest_for(p.launcher)) {
    const SchedulerDialect::HostedLaunch hosted = guest->hosted_launch(p, dialect);
    d.set("hosted", true);
    d.set("hosted_notes", list_of(hosted.notes));
    d.set("hosted_prefix", hosted.prefix);
  }
  if (!p.warning_signal.empty()) {
    d.set("warning_signal", p.warning_signal);
    d.set("warning_seconds", std::to_string(p.warning_seconds));
  }
  // The launch block runs once per entry: `hpclaunch check` first with --preflight, then the command (in the
  // background when a warning signal is to be passed on to it).
  mus::data launches{mus::data::type::list};
  if (p.preflight) {
    mus::data check;
    check.set("preflight", true);
    std::string command = "\"$HPCLAUNCH\" check";
    if (p.gpus_per_node > 0) command += " --expect-gpus " + std::to_string(p.gpus_per_node);
    // The interconnect's figure holds across nodes; one node's allreduce measures NVLink or memory instead.
    if (p.site.interconnect.busbw_gbs > 0 && p.nodes > 1) command += " --expect-busbw " + std::to_string(p.site.interconnect.busbw_gbs);
    // Measured only where nodes are in NVLink domains (the fabric `hpclaunch check` reads); one node's is NVLink too.
    if (p.site.interconnect.nvlink_busbw_gbs > 0)
      command += " --expect-nvlink-busbw " + std::to_string(p.site.interconnect.nvlink_busbw_gbs);
    if (p.segment > 0) command += " --segment " + std::to_string(p.segment);  // each segment's nodes in one NVLink domain
    check.set("command", command);
    check.set("background", std::string());
    launches << check;
  }
  mus::data main;
  main.set("preflight", false);
  // An array task's command is set by its `case` branch (the sweep's values substituted).
  main.set("command", p.array.active() ? std::string("\"${hpclaunch_command[@]}\"") : shell_join(p.command));
  main.set("background", p.warning_signal.empty() ? std::string() : std::string(" &"));
  launches << main;
  d.set("launches", launches);
  if (p.requeue) d.set("max_requeues", std::to_string(p.max_requeues));
  if (p.site.retired()) d.set("retired", "retired " + p.site.retired_on + "; successors: " + join(p.site.successors, ", "));

  const ScriptPlace place{ctx.workdir, ctx.job_dir, p.array.active(), ctx.array_directives};
  d.set("directives", list_of(dialect.directives(p, place)));
  std::vector<std::string> modules;
  for (const auto& m : p.modules) modules.push_back(shell_quote(m));
  if (!modules.empty()) d.set("modules", join(modules, " "));
  d.set("notes", list_of(p.script_notes));
  std::vector<std::string> exports, forwarded;
  for (const auto& [k, v] : script_env(p, ctx)) {
    exports.push_back(k + "=" + shell_quote(v));
    forwarded.push_back(k);
  }
  d.set("exports", list_of(exports));
  // The network's documented settings yield to a value the user's environment already has (sbatch and qsub -V
  // pass it on); the profile's env and --env above are the job's own, and win.
  std::vector<std::string> network, container_setup;
  for (const auto& v : p.site.interconnect.env) {
    if (has_env(p.env, v.name)) continue;
    network.push_back(fmt::format("[ -n \"${{{}+set}}\" ] || export {}={}", v.name, v.name, shell_quote(v.value)));
    forwarded.push_back(v.name);
  }
  if (!network.empty())
    network.insert(network.begin(), fmt::format("# {}'s network settings, as the site documents them (`hpclaunch sites show "
                                                "{}` names the source of each), unless already set:",
                                                p.site.name, p.site.name));
  if (!p.container_image.empty() && p.site.container.sets_network_env)
    network.push_back(fmt::format("# {}'s container sets the network's NCCL and libfabric variables itself: the site's "
                                  "host values are not exported over them.", p.site.name));
  // A container the site runs as options of srun's steps: every step (the agents', the ranks') is in it, so it must
  // see hpclaunch, the working directory and the job directory; an EDF file is written before the first step.
  if (!p.container_image.empty() && !p.site.container.srun_options.empty()) {
    const std::string edf_path = ctx.job_dir + "/container.toml";
    auto fill = [&](const std::string& t) {
      std::string dir = ctx.hpclaunch.substr(0, ctx.hpclaunch.rfind('/'));
      return replace_all(replace_all(replace_all(replace_all(replace_all(t, "{image}", p.container_image), "{edf}", edf_path),
                                                 "{hpclaunch_dir}", dir.empty() ? "/" : dir),
                                     "{workdir}", ctx.workdir),
                         "{job_dir}", ctx.job_dir);
    };
    std::vector<std::string> options;
    for (const auto& o : p.site.container.srun_options) options.push_back(shell_quote(fill(o)));
    d.set("step_options", " " + join(options, " "));
    if (!p.site.container.edf.empty()) {
      container_setup.push_back(fmt::format("# {}'s container engine: the environment definition (EDF) its srun steps run in.",
                                            p.site.name));
      container_setup.push_back("cat >" + shell_quote(edf_path) + " <<'HPCLAUNCH_EDF'");
      for (const auto& line : p.site.container.edf) container_setup.push_back(fill(line));
      container_setup.push_back("HPCLAUNCH_EDF");
    }
  }
  // The network's lines after the profile's setup lines, which may load the module that sets some of them.
  std::vector<std::string> setup = p.site.setup;
  setup.insert(setup.end(), network.begin(), network.end());
  setup.insert(setup.end(), container_setup.begin(), container_setup.end());
  d.set("setup", list_of(setup));
  if (p.array.active()) {
    d.set("array_lines", list_of(array_lines(p, ctx, dialect)));
    forwarded.insert(forwarded.end(), {"HPCLAUNCH_ARRAY_TASK", "HPCLAUNCH_ARRAY_TASKS", "HPCLAUNCH_ARRAY_DIR", "HPCLAUNCH_JOB_DIR"});
    for (const auto& [k, v] : task_env(p.array.tasks.front())) forwarded.push_back(k);
  }
  d.set("forwarded", list_of(forwarded));
  const Rendezvous& z = p.site.rendezvous;
  if (!z.suffix.empty()) d.set("addr_suffix", shell_quote(z.suffix));
  d.set("addr_resolve", z.resolve);
  if (z.master_addr == MasterAddrRule::fixed) d.set("addr_fixed", shell_quote(z.fixed_addr));
  // Only the Slurm template asks the node list for its first node; PBS and local scripts run on it already.
  d.set("addr_first_node", z.master_addr == MasterAddrRule::first_node);

  // The scheduler's own values, last: none may take the name of one above.
  for (const TemplateValue& v : dialect.template_values(p, place)) {
    if (d.get(v.key))
      throw failure(dialect.template_path(), "the scheduler's template value '" + v.key + "' is also one render gives",
                    "rename it in the dialect's template_values and its template");
    if (v.flag || !v.text.empty()) d.set(v.key, v.flag ? mus::data(true) : mus::data(v.text));
    else d.set(v.key, false);  // an empty text opens no section
  }

  mus::mustache tmpl(load_template(dialect));
  if (!tmpl.is_valid()) throw failure(dialect.template_path(), tmpl.error_message(), "fix the template");
  tmpl.set_custom_escape([](const std::string& s) { return s; });  // values are shell-quoted above
  std::string out = tmpl.render(d);
  if (!tmpl.is_valid()) throw failure(dialect.template_path(), tmpl.error_message(), "fix the template");
  // Optional sections leave blank lines behind; a script never needs two in a row.
  for (size_t pos; (pos = out.find("\n\n\n")) != std::string::npos;) out.erase(pos, 1);
  return out;
}

}  // namespace hpclaunch
