#include "site/profile_yaml.h"

#include <fmt/core.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <regex>

#include "util/warning_signal.h"
#include "util/time_limit.h"
#include "util/error.h"
#include "util/shell.h"
#include "util/strings.h"
#include "util/yaml_reader.h"

namespace hpclaunch {

namespace {

const std::vector<std::pair<std::string, std::string>> k_statuses = {{"active", "active"}, {"retired", "retired"}};

const std::vector<std::string> k_top_keys = {
    "name",    "title",  "status",    "retired_on", "successors", "extends", "scheduler",  "node",
    "queues",  "gpu_request", "account", "modules", "setup",   "container", "env",    "launch",
    "rendezvous", "requeue", "scratch", "directives", "sources", "learned", "submit_check", "unverified", "memory", "scratch_only", "variants", "interconnect",
    "account_directives", "notices", "arrays"};

void apply_node(const Reader& r, const YAML::Node& n, NodeShape* s) {
  r.check_keys(n, "node", {"gpus", "gpu_model", "cores", "threads_per_core", "memory_gb", "arch", "accelerator"});
  if (n["accelerator"]) s->accelerator = r.choice(n["accelerator"], "node.accelerator", k_accelerator_names);
  if (n["gpus"]) s->gpus = r.integer(n["gpus"], "node.gpus", 0, 64);
  if (n["gpu_model"]) s->gpu_model = r.scalar(n["gpu_model"], "node.gpu_model");
  if (n["cores"]) s->cores = r.integer(n["cores"], "node.cores", 1, 4096);
  if (n["threads_per_core"]) s->threads_per_core = r.integer(n["threads_per_core"], "node.threads_per_core", 1, 8);
  if (n["memory_gb"]) s->memory_gb = r.integer(n["memory_gb"], "node.memory_gb", 0, 1 << 24);
  if (n["arch"]) s->arch = r.scalar(n["arch"], "node.arch");
}

std::vector<Queue> read_queues(const Reader& r, const YAML::Node& n) {
  if (!n.IsSequence()) r.fail(n, "queues", "expected a list of queues", "write `queues: [{name: gpu, ...}]`");
  std::vector<Queue> out;
  int defaults = 0;
  for (const auto& q : n) {
    r.check_keys(q, "queues[]", {"name", "kind", "max_time", "max_nodes", "max_gpus", "min_gpus", "default", "note",
                                 "max_time_by_nodes", "memory_gb"});
    if (!q["name"]) r.fail(q, "queues[]", "missing field 'name'", "give every queue a name");
    Queue queue;
    queue.name = r.scalar(q["name"], "queues[].name");
    if (q["kind"]) queue.kind = r.choice(q["kind"], "queues[].kind", k_queue_kind_names);
    if (q["max_time"]) queue.max_time_s = r.time(q["max_time"], "queues[].max_time");
    if (q["max_nodes"]) queue.max_nodes = r.integer(q["max_nodes"], "queues[].max_nodes", 1, 1 << 20);
    if (q["max_gpus"]) queue.max_gpus = r.integer(q["max_gpus"], "queues[].max_gpus", 1, 1 << 20);
    if (q["min_gpus"]) queue.min_gpus = r.integer(q["min_gpus"], "queues[].min_gpus", 1, 1 << 20);
    if (q["default"]) queue.is_default = r.boolean(q["default"], "queues[].default");
    if (q["note"]) queue.note = r.scalar(q["note"], "queues[].note");
    if (q["memory_gb"]) queue.memory_gb = r.integer(q["memory_gb"], "queues[].memory_gb", 1, 1 << 24);
    if (const YAML::Node& by = q["max_time_by_nodes"]) {
      const char* hint = "write e.g. `max_time_by_nodes: {10: \"03:00:00\", 25: \"06:00:00\"}` (least nodes: time)";
      if (!by.IsMap()) r.fail(by, "queues[].max_time_by_nodes", "expected a map of node counts to times", hint);
      for (auto it = by.begin(); it != by.end(); ++it) {
        int nodes = r.integer(it->first, "queues[].max_time_by_nodes", 1, 1 << 20);
        queue.max_time_by_nodes.emplace_back(nodes, r.time(it->second, "queues[].max_time_by_nodes"));
      }
      std::sort(queue.max_time_by_nodes.begin(), queue.max_time_by_nodes.end());
    }
    defaults += queue.is_default;
    if (defaults > 1) r.fail(q, "queues[].default", "more than one queue is the default", "mark only one");
    out.push_back(queue);
  }
  return out;
}

void apply_gpu(const Reader& r, const YAML::Node& n, GpuRequest* g) {
  r.check_keys(n, "gpu_request", {"style", "type", "constraint", "max_cpus_per_gpu", "pbs_chunk_extra", "gpus_per_node"});
  if (n["gpus_per_node"]) {
    g->gpus_per_node_choices.clear();
    for (const auto& s : r.strings(n["gpus_per_node"], "gpu_request.gpus_per_node")) {
      long long v = 0;
      if (!parse_int(s, &v) || v < 1) r.fail(n["gpus_per_node"], "gpu_request.gpus_per_node", "'" + s + "' is not a GPU count", "write e.g. `gpus_per_node: [1, 4]`");
      g->gpus_per_node_choices.push_back(static_cast<int>(v));
    }
  }
  if (n["style"]) g->style = r.choice(n["style"], "gpu_request.style", gpu_style_names());
  if (n["type"]) g->type = r.scalar(n["type"], "gpu_request.type");
  if (n["constraint"]) g->constraint = r.scalar(n["constraint"], "gpu_request.constraint");
  if (n["max_cpus_per_gpu"]) g->max_cpus_per_gpu = r.integer(n["max_cpus_per_gpu"], "gpu_request.max_cpus_per_gpu", 1, 4096);
  if (n["pbs_chunk_extra"]) g->pbs_chunk_extra = r.scalar(n["pbs_chunk_extra"], "gpu_request.pbs_chunk_extra");
}

void apply_account(const Reader& r, const YAML::Node& n, AccountRule* a) {
  r.check_keys(n, "account", {"required", "pattern", "example", "flag"});
  if (n["required"]) a->required = r.boolean(n["required"], "account.required");
  if (n["pattern"]) {
    a->pattern = r.scalar(n["pattern"], "account.pattern");
    try {
      std::regex re(a->pattern);
    } catch (const std::regex_error& e) {
      r.fail(n["pattern"], "account.pattern", std::string("not a valid regular expression: ") + e.what(),
             "fix the pattern");
    }
  }
  if (n["example"]) a->example = r.scalar(n["example"], "account.example");
  if (n["flag"]) a->flag = r.choice(n["flag"], "account.flag", std::vector<std::pair<std::string, std::string>>{{"-A", "-A"}, {"-P", "-P"}});
}

void apply_container(const Reader& r, const YAML::Node& n, Container* c) {
  r.check_keys(n, "container", {"runtime", "directives", "wrap", "modules", "srun_options", "edf"});
  *c = Container{};  // a container block is one form: a site file's replaces the base's whole (no wrap left over)
  if (n["srun_options"]) c->srun_options = r.strings(n["srun_options"], "container.srun_options");
  if (n["edf"]) c->edf = r.strings(n["edf"], "container.edf");
  if (n["runtime"]) c->runtime = r.scalar(n["runtime"], "container.runtime");
  if (n["directives"]) c->directives = r.strings(n["directives"], "container.directives");
  if (n["wrap"]) c->wrap = r.strings(n["wrap"], "container.wrap");
  if (n["modules"]) c->modules = r.strings(n["modules"], "container.modules");
}

// The geometry's own options (nodes, tasks, CPUs per task) come from the plan; a profile that set them too would
// say two different things to srun.
std::vector<std::string> rank_options(const Reader& r, const YAML::Node& n) {
  std::vector<std::string> out = r.strings(n, "launch.srun_rank_options");
  static const std::regex k_geometry("(-[Nnc]|--(nodes|ntasks|ntasks-per-node|cpus-per-task))(=.*|[0-9].*)?");
  for (const auto& o : out) {
    if (std::regex_match(o, k_geometry))
      r.fail(n, "launch.srun_rank_options", "'" + o + "' sets the geometry, which hpclaunch plans itself",
             "remove it: the nodes, tasks and CPUs per task come from node: and the job's flags");
    if (o.empty() || o[0] != '-' || o.find_first_of(" \t\n'\"$`;&|<>") != std::string::npos)
      r.fail(n, "launch.srun_rank_options", "'" + o + "' is not one srun option",
             "give one option a list entry, e.g. `--gpu-bind=closest`");
  }
  return out;
}

void apply_launch(const Reader& r, const YAML::Node& n, SiteProfile* p) {
  r.check_keys(n, "launch", {"default", "allowed", "gpu_bind", "mpirun_modules", "srun_rank_options", "pals_cpu_bind"});
  if (n["srun_rank_options"]) p->srun_rank_options = rank_options(r, n["srun_rank_options"]);
  if (n["pals_cpu_bind"]) {
    p->pals_cpu_bind = r.scalar(n["pals_cpu_bind"], "launch.pals_cpu_bind");
    static const std::regex k_list("list(:[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*)+");
    if (!std::regex_match(p->pals_cpu_bind, k_list))
      r.fail(n["pals_cpu_bind"], "launch.pals_cpu_bind", "'" + p->pals_cpu_bind + "' is not a PALS CPU list",
             "write `pals_cpu_bind: \"list:4-7:8-11\"` (one CPU set per rank of a node, ':' between them)");
  }
  if (n["mpirun_modules"]) p->mpirun_modules = r.strings(n["mpirun_modules"], "launch.mpirun_modules");
  if (n["allowed"]) {
    const YAML::Node& list = n["allowed"];
    if (!list.IsSequence()) r.fail(list, "launch.allowed", "expected a list", "write `allowed: [agent, srun]`");
    p->launchers.clear();
    for (const auto& item : list) p->launchers.push_back(r.choice(item, "launch.allowed[]", launch_mode_names()));
  }
  if (n["default"]) p->default_launcher = r.choice(n["default"], "launch.default", launch_mode_names());
  if (n["gpu_bind"]) p->gpu_bind = r.choice(n["gpu_bind"], "launch.gpu_bind", k_gpu_bind_names);
  if ((n["default"] || n["allowed"]) && !p->allows(p->default_launcher))
    r.fail(n, "launch.default", std::string("'") + to_string(p->default_launcher) + "' is not in launch.allowed",
           "add it to allowed or pick another default");
}

void apply_rendezvous(const Reader& r, const YAML::Node& n, Rendezvous* z) {
  r.check_keys(n, "rendezvous", {"master_addr", "suffix", "resolve", "address", "port"});
  if (n["master_addr"])
    z->master_addr = r.choice(n["master_addr"], "rendezvous.master_addr", k_master_addr_rule_names);
  if (n["suffix"]) z->suffix = r.scalar(n["suffix"], "rendezvous.suffix");
  if (n["resolve"]) z->resolve = r.boolean(n["resolve"], "rendezvous.resolve");
  if (n["address"]) z->fixed_addr = r.scalar(n["address"], "rendezvous.address");
  if (n["port"]) z->port = r.integer(n["port"], "rendezvous.port", 1024, 65535);
  if (z->master_addr == MasterAddrRule::fixed && z->fixed_addr.empty())
    r.fail(n, "rendezvous.address", "master_addr is 'fixed' but no address is given", "add `address: 127.0.0.1`");
}

void apply_requeue(const Reader& r, const YAML::Node& n, RequeuePolicy* q) {
  r.check_keys(n, "requeue", {"enabled", "signal", "max_requeues"});
  if (n["enabled"]) q->enabled = r.boolean(n["enabled"], "requeue.enabled");
  if (n["signal"]) {
    std::string s = r.scalar(n["signal"], "requeue.signal");
    std::string err;
    if (!parse_warning_signal(s, &q->signal, &q->seconds, &err)) r.fail(n["signal"], "requeue.signal", err, "write e.g. `signal: USR1@120`");
  }
  if (n["max_requeues"]) q->max_requeues = r.integer(n["max_requeues"], "requeue.max_requeues", 0, 1000);
}

void apply_interconnect(const Reader& r, const YAML::Node& n, Interconnect* ic) {
  r.check_keys(n, "interconnect", {"name", "busbw_gbs", "source", "env", "never_set"});
  if (n["name"]) ic->name = r.scalar(n["name"], "interconnect.name");
  if (n["busbw_gbs"]) ic->busbw_gbs = r.integer(n["busbw_gbs"], "interconnect.busbw_gbs", 1, 100000);
  if (n["source"]) ic->busbw_source = r.scalar(n["source"], "interconnect.source");
  if (ic->busbw_gbs && ic->busbw_source.empty())
    r.fail(n, "interconnect", "busbw_gbs without a source", "add `source:` (where the figure was measured or published)");
  if (const YAML::Node& list = n["env"]) {
    const char* hint = "write `env: [{name: NCCL_CROSS_NIC, value: \"1\", source: \"URL\"}]`";
    if (!list.IsSequence()) r.fail(list, "interconnect.env", "expected a list", hint);
    ic->env.clear();
    for (const auto& v : list) {
      r.check_keys(v, "interconnect.env[]", {"name", "value", "source"});
      for (const char* key : {"name", "value", "source"})
        if (!v[key]) r.fail(v, "interconnect.env[]", std::string("missing field '") + key + "'", hint);
      NetworkVar var{r.scalar(v["name"], "interconnect.env[].name"), r.scalar(v["value"], "interconnect.env[].value"),
                     r.scalar(v["source"], "interconnect.env[].source")};
      if (!is_env_name(var.name))
        r.fail(v["name"], "interconnect.env[].name", "'" + var.name + "' is not a variable name", "use letters, digits and _");
      ic->env.push_back(var);
    }
  }
  if (const YAML::Node& list = n["never_set"]) {
    const char* hint = "write `never_set: [{name: NCCL_NET_PLUGIN, reason: \"... (URL)\"}]`";
    if (!list.IsSequence()) r.fail(list, "interconnect.never_set", "expected a list", hint);
    ic->never_set.clear();
    for (const auto& v : list) {
      r.check_keys(v, "interconnect.never_set[]", {"name", "reason"});
      if (!v["name"] || !v["reason"]) r.fail(v, "interconnect.never_set[]", "needs a name and a reason", hint);
      ic->never_set.push_back({r.scalar(v["name"], "interconnect.never_set[].name"),
                               r.scalar(v["reason"], "interconnect.never_set[].reason")});
    }
  }
}

// Sets every field present in `root` on `p`, leaving the others as they are (a base or `extends:` profile).
void apply(const Reader& r, const YAML::Node& root, SiteProfile* p, bool is_variant) {
  std::vector<std::string> keys = k_top_keys;
  if (is_variant) keys.erase(std::remove(keys.begin(), keys.end(), "variants"), keys.end());
  r.check_keys(root, "", keys);
  if (root["title"]) p->title = r.scalar(root["title"], "title");
  if (root["status"]) p->status = r.choice(root["status"], "status", k_statuses);
  if (root["retired_on"]) p->retired_on = r.scalar(root["retired_on"], "retired_on");
  if (root["successors"]) p->successors = r.strings(root["successors"], "successors");
  if (root["scheduler"]) p->scheduler = r.choice(root["scheduler"], "scheduler", scheduler_names());
  if (root["node"]) apply_node(r, root["node"], &p->node);
  if (root["queues"]) p->queues = read_queues(r, root["queues"]);
  if (root["gpu_request"]) apply_gpu(r, root["gpu_request"], &p->gpu);
  if (root["account"]) apply_account(r, root["account"], &p->account);
  if (root["modules"]) p->modules = r.strings(root["modules"], "modules");
  if (root["setup"]) p->setup = r.strings(root["setup"], "setup");
  if (root["container"]) apply_container(r, root["container"], &p->container);
  if (root["env"]) p->env = r.env_map(root["env"], "env");
  if (root["launch"]) apply_launch(r, root["launch"], p);
  if (root["rendezvous"]) apply_rendezvous(r, root["rendezvous"], &p->rendezvous);
  if (root["requeue"]) apply_requeue(r, root["requeue"], &p->requeue);
  if (root["scratch"]) p->scratch = r.strings(root["scratch"], "scratch");
  if (root["directives"]) p->directives = r.strings(root["directives"], "directives");
  if (root["sources"]) p->sources = r.strings(root["sources"], "sources");
  if (root["learned"]) {
    const YAML::Node& n = root["learned"];
    r.check_keys(n, "learned", {"date", "commands"});
    Learned l;
    if (n["date"]) l.date = r.scalar(n["date"], "learned.date");
    if (n["commands"]) l.commands = r.strings(n["commands"], "learned.commands");
    p->learned = l;
  }
  if (root["submit_check"]) p->submit_check = r.boolean(root["submit_check"], "submit_check");
  if (root["unverified"]) p->unverified = r.strings(root["unverified"], "unverified");
  if (root["scratch_only"]) p->scratch_only = r.boolean(root["scratch_only"], "scratch_only");
  if (root["account_directives"]) p->account_directives = r.strings(root["account_directives"], "account_directives");
  if (root["arrays"]) p->arrays = r.boolean(root["arrays"], "arrays");
  if (const YAML::Node& list = root["notices"]) {
    if (!list.IsSequence()) r.fail(list, "notices", "expected a list", "write `notices: [{text: ..., min_nodes: 6}]`");
    p->notices.clear();
    for (const auto& n : list) {
      r.check_keys(n, "notices[]", {"text", "min_nodes"});
      if (!n["text"]) r.fail(n, "notices[]", "missing field 'text'", "say what the user must know");
      Notice notice{r.scalar(n["text"], "notices[].text"), 0};
      if (n["min_nodes"]) notice.min_nodes = r.integer(n["min_nodes"], "notices[].min_nodes", 1, 1 << 20);
      p->notices.push_back(notice);
    }
  }
  if (root["interconnect"]) apply_interconnect(r, root["interconnect"], &p->interconnect);
  if (root["memory"]) {
    const YAML::Node& n = root["memory"];
    r.check_keys(n, "memory", {"request", "amount"});
    if (!n["request"]) r.fail(n, "memory", "missing field 'request'", "write e.g. `memory: {request: whole-node}`");
    p->memory.style = r.choice(n["request"], "memory.request", k_memory_style_names);
    p->memory.amount = n["amount"] ? r.scalar(n["amount"], "memory.amount") : "";
    static const std::regex k_amount("[0-9]+[KMGT]?");
    if (p->memory.style == MemoryStyle::per_gpu && !std::regex_match(p->memory.amount, k_amount))
      r.fail(n, "memory.amount", "per-gpu needs an amount like 64G", "write `memory: {request: per-gpu, amount: 64G}`");
  }
}

// A profile that extends nothing must say everything a plan needs.
void require_complete(const Reader& r, const YAML::Node& root) {
  const std::vector<std::pair<std::string, std::string>> required = {
      {"scheduler", "scheduler: slurm"}, {"node", "node: {gpus: 4, cores: 64, memory_gb: 256}"},
      {"launch", "launch: {default: srun, allowed: [agent, srun]}"}};
  for (const auto& [key, example] : required)
    if (!root[key]) r.fail(root, "", "missing required field '" + key + "'", "add e.g. `" + example + "`");
  // Mappings before their keys are looked up: yaml-cpp throws its own exception for a key of a scalar.
  const YAML::Node node = root["node"];
  r.expect_map(node, "node");
  for (const char* key : {"gpus", "cores"})
    if (!node[key]) r.fail(node, "node", std::string("missing required field 'node.") + key + "'", "add it");
  r.expect_map(root["launch"], "launch");
  if (!root["launch"]["allowed"]) r.fail(root["launch"], "launch", "missing required field 'launch.allowed'", "list the launch modes the site supports");
}

// Another vendor's device variables in a profile cannot work (ROCR_VISIBLE_DEVICES on NVIDIA GPUs selects nothing
// and hides nothing); most likely the profile names the wrong node.accelerator.
void check_vendor_variables(const Reader& r, const YAML::Node& at, const SiteProfile& p) {
  std::vector<std::string> names;
  for (const auto& [k, v] : p.env) names.push_back(k);
  for (const auto& v : p.interconnect.env) names.push_back(v.name);
  for (const auto& name : names)
    for (const auto& [vendor_name, vendor] : k_accelerator_names)
      if (vendor != p.node.accelerator)
        for (const auto& prefix : device_visibility(vendor).own_prefixes)
          if (name.rfind(prefix, 0) == 0)
            r.fail(at, "env", fmt::format("{} is {}'s, but node.accelerator is {}", name, vendor_name,
                                          to_string(p.node.accelerator)),
                   fmt::format("remove it, or write `node: {{accelerator: {}}}`", vendor_name));
}

void check_consistent(const Reader& r, const YAML::Node& at, const SiteProfile& p, const SchedulerChecks& checks) {
  if (checks.launcher)
    for (const auto& [name, mode] : launch_mode_names())
      if (std::string why = p.allows(mode) ? checks.launcher(p.scheduler, mode) : ""; !why.empty())
        r.fail(at, "launch.allowed", why + " but the scheduler is " + to_string(p.scheduler),
               "drop " + name + " from launch.allowed");
  // A style the scheduler does not write would leave the job without its GPUs (or an empty directive).
  if (std::string why = checks.gpu_style ? checks.gpu_style(p.scheduler, p.gpu.style) : ""; !why.empty()) {
    const YAML::Node gpu = at.IsMap() ? at["gpu_request"] : YAML::Node();
    const bool here = gpu && gpu.IsMap() && gpu["style"];  // else it came from the profile this one extends
    r.fail(here ? gpu["style"] : at, "gpu_request.style", why, "change gpu_request.style, or the scheduler");
  }
  if (p.retired() && p.successors.empty())
    r.fail(at, "successors", "a retired site must name its successors", "add `successors: [NAME]`");
  if (p.node.gpus > 0 && p.node.cores < p.node.gpus)
    r.fail(at, "node.cores", "fewer cores than GPUs", "check node.cores and node.gpus");
  if (!p.srun_rank_options.empty() && !p.allows(LaunchMode::srun))
    r.fail(at, "launch.srun_rank_options", "given, but the site allows no srun launch (its scheduler is " +
                                               std::string(to_string(p.scheduler)) + ")",
           "remove them, or allow srun");
  // A container given as srun options runs only where the scheduler's steps are srun's.
  if (!p.container.srun_options.empty() && checks.launcher && !checks.launcher(p.scheduler, LaunchMode::srun).empty())
    r.fail(at, "container.srun_options", "the scheduler is " + std::string(to_string(p.scheduler)) +
                                             ", whose jobs start no srun steps to run the container",
           "use container.wrap (e.g. [apptainer, exec, \"{gpu_flag}\", \"{image}\"]) or directives");
  if (!p.container.edf.empty() && p.container.srun_options.empty())
    r.fail(at, "container.edf", "an EDF file that no srun option names", "add `srun_options: [\"--environment={edf}\"]`");
  if (!p.pals_cpu_bind.empty() && !p.allows(LaunchMode::pals))
    r.fail(at, "launch.pals_cpu_bind", "given, but the site allows no pals launch", "remove it, or allow pals");
  check_vendor_variables(r, at, p);
  for (const auto& bad : p.interconnect.never_set) {
    bool in_env = std::any_of(p.env.begin(), p.env.end(), [&](const auto& kv) { return kv.first == bad.name; });
    bool in_net = std::any_of(p.interconnect.env.begin(), p.interconnect.env.end(),
                              [&](const NetworkVar& v) { return v.name == bad.name; });
    if (in_env || in_net)
      r.fail(at, in_env ? "env" : "interconnect.env", bad.name + " is set, but the site says not to: " + bad.reason,
             "remove it");
  }
}

YAML::Node parse(const ProfileSource& source) {
  return Reader(source.file).load_map(source.text, "a site profile", "start with `name: mysite`");
}

// A site's name as `name:` or a key of `variants:` gives it (`at`), checked: it is typed on command lines.
std::string site_name(const Reader& r, const YAML::Node& at, const std::string& field) {
  std::string name = r.scalar(at, field);
  static const std::regex k_name_re("[a-z0-9][a-z0-9._-]*");
  if (!std::regex_match(name, k_name_re))
    r.fail(at, field, "'" + name + "' is not a valid site name", "use lower-case letters, digits, '-', '.', '_'");
  return name;
}

std::string name_of(const Reader& r, const YAML::Node& root) {
  if (!root["name"]) r.fail(root, "", "missing required field 'name'", "add `name: mysite`");
  return site_name(r, root["name"], "name");
}

}  // namespace

ProfileHeader read_header(const ProfileSource& source) {
  YAML::Node root = parse(source);
  Reader r(source.file);
  ProfileHeader h;
  h.names.push_back(name_of(r, root));
  if (root["extends"]) h.extends = r.scalar(root["extends"], "extends");
  if (root["variants"] && root["variants"].IsMap())
    for (auto it = root["variants"].begin(); it != root["variants"].end(); ++it)
      h.names.push_back(site_name(r, it->first, "variants"));
  return h;
}

std::vector<SiteProfile> read_profiles(const ProfileSource& source, const ProfileLookup& lookup,
                                       const SchedulerChecks& checks) {
  YAML::Node root = parse(source);
  Reader r(source.file);
  SiteProfile base;
  std::string name = name_of(r, root);
  if (root["extends"]) {
    std::string parent = r.scalar(root["extends"], "extends");
    const SiteProfile* found = lookup(parent);
    if (!found) r.fail(root["extends"], "extends", "no site profile named '" + parent + "'", "run `hpclaunch sites` for the names");
    base = *found;
    base.status = "active";
    base.retired_on.clear();
    base.successors.clear();
  } else {
    require_complete(r, root);
  }
  base.name = name;
  base.file = source.file;
  apply(r, root, &base, false);
  check_consistent(r, root, base, checks);
  std::vector<SiteProfile> out = {base};
  if (root["variants"]) {
    const YAML::Node& variants = root["variants"];
    r.expect_map(variants, "variants");
    for (auto it = variants.begin(); it != variants.end(); ++it) {
      SiteProfile v = base;
      v.name = site_name(r, it->first, "variants");
      if (it->second.IsMap() && it->second["name"])
        r.fail(it->second["name"], "variants." + v.name, "a variant is named by its key", "remove `name:`");
      if (!it->second.IsNull()) apply(r, it->second, &v, true);
      check_consistent(r, it->second, v, checks);
      out.push_back(v);
    }
  }
  return out;
}

std::string profile_to_yaml(const SiteProfile& p) {
  YAML::Emitter e;
  e << YAML::BeginMap;
  e << YAML::Key << "name" << YAML::Value << p.name;
  if (!p.title.empty()) e << YAML::Key << "title" << YAML::Value << p.title;
  e << YAML::Key << "status" << YAML::Value << p.status;
  if (!p.retired_on.empty()) e << YAML::Key << "retired_on" << YAML::Value << p.retired_on;
  if (!p.successors.empty()) e << YAML::Key << "successors" << YAML::Value << YAML::Flow << p.successors;
  e << YAML::Key << "scheduler" << YAML::Value << to_string(p.scheduler);
  e << YAML::Key << "node" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "gpus" << YAML::Value << p.node.gpus;
  if (!p.node.gpu_model.empty()) e << YAML::Key << "gpu_model" << YAML::Value << p.node.gpu_model;
  e << YAML::Key << "cores" << YAML::Value << p.node.cores;
  e << YAML::Key << "threads_per_core" << YAML::Value << p.node.threads_per_core;
  e << YAML::Key << "memory_gb" << YAML::Value << p.node.memory_gb;
  e << YAML::Key << "arch" << YAML::Value << p.node.arch;
  e << YAML::Key << "accelerator" << YAML::Value << to_string(p.node.accelerator);
  e << YAML::EndMap;
  if (!p.queues.empty()) {
    e << YAML::Key << "queues" << YAML::Value << YAML::BeginSeq;
    for (const auto& q : p.queues) {
      e << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << q.name;
      e << YAML::Key << "kind" << YAML::Value << to_string(q.kind);
      if (q.max_time_s) e << YAML::Key << "max_time" << YAML::Value << format_slurm_time(q.max_time_s);
      if (q.max_nodes) e << YAML::Key << "max_nodes" << YAML::Value << q.max_nodes;
      if (q.max_gpus) e << YAML::Key << "max_gpus" << YAML::Value << q.max_gpus;
      if (q.min_gpus) e << YAML::Key << "min_gpus" << YAML::Value << q.min_gpus;
      if (q.is_default) e << YAML::Key << "default" << YAML::Value << true;
      if (!q.note.empty()) e << YAML::Key << "note" << YAML::Value << q.note;
      if (!q.max_time_by_nodes.empty()) {
        e << YAML::Key << "max_time_by_nodes" << YAML::Value << YAML::BeginMap;
        for (const auto& [nodes, t] : q.max_time_by_nodes) e << YAML::Key << nodes << YAML::Value << format_slurm_time(t);
        e << YAML::EndMap;
      }
      if (q.memory_gb) e << YAML::Key << "memory_gb" << YAML::Value << q.memory_gb;
      e << YAML::EndMap;
    }
    e << YAML::EndSeq;
  }
  e << YAML::Key << "gpu_request" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "style" << YAML::Value << to_string(p.gpu.style);
  if (!p.gpu.type.empty()) e << YAML::Key << "type" << YAML::Value << p.gpu.type;
  if (!p.gpu.constraint.empty()) e << YAML::Key << "constraint" << YAML::Value << p.gpu.constraint;
  if (p.gpu.max_cpus_per_gpu) e << YAML::Key << "max_cpus_per_gpu" << YAML::Value << p.gpu.max_cpus_per_gpu;
  if (!p.gpu.pbs_chunk_extra.empty()) e << YAML::Key << "pbs_chunk_extra" << YAML::Value << p.gpu.pbs_chunk_extra;
  if (!p.gpu.gpus_per_node_choices.empty())
    e << YAML::Key << "gpus_per_node" << YAML::Value << YAML::Flow << p.gpu.gpus_per_node_choices;
  e << YAML::EndMap;
  e << YAML::Key << "account" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "required" << YAML::Value << p.account.required;
  if (!p.account.pattern.empty()) e << YAML::Key << "pattern" << YAML::Value << p.account.pattern;
  if (p.account.flag != "-A") e << YAML::Key << "flag" << YAML::Value << p.account.flag;
  if (!p.account.example.empty()) e << YAML::Key << "example" << YAML::Value << p.account.example;
  e << YAML::EndMap;
  if (!p.modules.empty()) e << YAML::Key << "modules" << YAML::Value << YAML::Flow << p.modules;
  if (!p.setup.empty()) e << YAML::Key << "setup" << YAML::Value << p.setup;
  if (!p.container.runtime.empty()) {
    e << YAML::Key << "container" << YAML::Value << YAML::BeginMap;
    e << YAML::Key << "runtime" << YAML::Value << p.container.runtime;
    if (!p.container.directives.empty()) e << YAML::Key << "directives" << YAML::Value << YAML::Flow << p.container.directives;
    if (!p.container.wrap.empty()) e << YAML::Key << "wrap" << YAML::Value << YAML::Flow << p.container.wrap;
    if (!p.container.modules.empty()) e << YAML::Key << "modules" << YAML::Value << YAML::Flow << p.container.modules;
    if (!p.container.srun_options.empty())
      e << YAML::Key << "srun_options" << YAML::Value << YAML::Flow << p.container.srun_options;
    if (!p.container.edf.empty()) e << YAML::Key << "edf" << YAML::Value << p.container.edf;
    e << YAML::EndMap;
  }
  if (!p.env.empty()) {
    e << YAML::Key << "env" << YAML::Value << YAML::BeginMap;
    for (const auto& [k, v] : p.env) e << YAML::Key << k << YAML::Value << v;
    e << YAML::EndMap;
  }
  e << YAML::Key << "launch" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "default" << YAML::Value << to_string(p.default_launcher);
  std::vector<std::string> allowed;
  for (auto m : p.launchers) allowed.push_back(to_string(m));
  e << YAML::Key << "allowed" << YAML::Value << YAML::Flow << allowed;
  e << YAML::Key << "gpu_bind" << YAML::Value << to_string(p.gpu_bind);
  if (!p.mpirun_modules.empty()) e << YAML::Key << "mpirun_modules" << YAML::Value << YAML::Flow << p.mpirun_modules;
  if (!p.srun_rank_options.empty())
    e << YAML::Key << "srun_rank_options" << YAML::Value << YAML::Flow << p.srun_rank_options;
  if (!p.pals_cpu_bind.empty()) e << YAML::Key << "pals_cpu_bind" << YAML::Value << p.pals_cpu_bind;
  e << YAML::EndMap;
  e << YAML::Key << "rendezvous" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "master_addr" << YAML::Value << to_string(p.rendezvous.master_addr);
  if (!p.rendezvous.suffix.empty()) e << YAML::Key << "suffix" << YAML::Value << p.rendezvous.suffix;
  e << YAML::Key << "resolve" << YAML::Value << p.rendezvous.resolve;
  if (!p.rendezvous.fixed_addr.empty()) e << YAML::Key << "address" << YAML::Value << p.rendezvous.fixed_addr;
  if (p.rendezvous.port) e << YAML::Key << "port" << YAML::Value << p.rendezvous.port;
  e << YAML::EndMap;
  e << YAML::Key << "requeue" << YAML::Value << YAML::Flow << YAML::BeginMap;
  e << YAML::Key << "enabled" << YAML::Value << p.requeue.enabled;
  e << YAML::Key << "signal" << YAML::Value << p.requeue.signal + "@" + std::to_string(p.requeue.seconds);
  e << YAML::Key << "max_requeues" << YAML::Value << p.requeue.max_requeues;
  e << YAML::EndMap;
  if (!p.scratch.empty()) e << YAML::Key << "scratch" << YAML::Value << YAML::Flow << p.scratch;
  if (!p.directives.empty()) e << YAML::Key << "directives" << YAML::Value << YAML::Flow << p.directives;
  if (!p.account_directives.empty())
    e << YAML::Key << "account_directives" << YAML::Value << YAML::Flow << p.account_directives;
  if (!p.arrays) e << YAML::Key << "arrays" << YAML::Value << false;
  if (!p.notices.empty()) {
    e << YAML::Key << "notices" << YAML::Value << YAML::BeginSeq;
    for (const auto& n : p.notices) {
      e << YAML::Flow << YAML::BeginMap << YAML::Key << "text" << YAML::Value << n.text;
      if (n.min_nodes) e << YAML::Key << "min_nodes" << YAML::Value << n.min_nodes;
      e << YAML::EndMap;
    }
    e << YAML::EndSeq;
  }
  if (!p.sources.empty()) e << YAML::Key << "sources" << YAML::Value << p.sources;
  if (p.memory.style != MemoryStyle::unset) {
    e << YAML::Key << "memory" << YAML::Value << YAML::Flow << YAML::BeginMap;
    e << YAML::Key << "request" << YAML::Value << to_string(p.memory.style);
    if (!p.memory.amount.empty()) e << YAML::Key << "amount" << YAML::Value << p.memory.amount;
    e << YAML::EndMap;
  }
  if (!p.unverified.empty()) e << YAML::Key << "unverified" << YAML::Value << p.unverified;
  if (p.scratch_only) e << YAML::Key << "scratch_only" << YAML::Value << true;
  const Interconnect& ic = p.interconnect;
  if (!ic.name.empty() || ic.busbw_gbs || !ic.env.empty() || !ic.never_set.empty()) {
    e << YAML::Key << "interconnect" << YAML::Value << YAML::BeginMap;
    if (!ic.name.empty()) e << YAML::Key << "name" << YAML::Value << ic.name;
    if (ic.busbw_gbs)
      e << YAML::Key << "busbw_gbs" << YAML::Value << ic.busbw_gbs << YAML::Key << "source" << YAML::Value << ic.busbw_source;
    if (!ic.env.empty()) {
      e << YAML::Key << "env" << YAML::Value << YAML::BeginSeq;
      for (const auto& v : ic.env)
        e << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << v.name << YAML::Key << "value"
          << YAML::Value << v.value << YAML::Key << "source" << YAML::Value << v.source << YAML::EndMap;
      e << YAML::EndSeq;
    }
    if (!ic.never_set.empty()) {
      e << YAML::Key << "never_set" << YAML::Value << YAML::BeginSeq;
      for (const auto& v : ic.never_set)
        e << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << v.name << YAML::Key << "reason"
          << YAML::Value << v.reason << YAML::EndMap;
      e << YAML::EndSeq;
    }
    e << YAML::EndMap;
  }

  if (p.submit_check) e << YAML::Key << "submit_check" << YAML::Value << true;
  if (p.learned) {
    e << YAML::Key << "learned" << YAML::Value << YAML::BeginMap;
    e << YAML::Key << "date" << YAML::Value << p.learned->date;
    e << YAML::Key << "commands" << YAML::Value << p.learned->commands;
    e << YAML::EndMap;
  }
  e << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

}  // namespace hpclaunch
