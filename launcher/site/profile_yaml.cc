// Each key of a profile is one line of its section's field table below (k_node_fields, ..., k_top_fields; the
// machinery: util/yaml_fields.h): its key, how its value is read into the struct and how `sites show` writes it. The
// table gives Reader::check_keys the keys a section allows (in the table's order, which error messages list), and
// the reader and the writer their fields.
//
// A new key is one table line, `field("key", &Struct::member, kind)`: kind is how its value is read and written
// (k_text, k_flag, k_list, k_lines, k_time, whole_number(min, max), one_of(names), or checked(kind, check) for a value
// with a rule of its own), and Shown::always where `sites show` writes it even at the struct's default. A new
// top-level key is written last unless k_top_write_order places it. What is odd stays explicit beside its table: a
// section's checks across its fields (read_launch, read_rendezvous, read_memory, read_interconnect), the lists'
// messages (read_queues, ...), and the checks of a whole profile (require_complete, check_consistent).
#include "site/profile_yaml.h"

#include <fmt/core.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <regex>

#include "util/byte_size.h"
#include "util/warning_signal.h"
#include "util/time_limit.h"
#include "util/error.h"
#include "util/shell.h"
#include "util/ssh_target.h"
#include "util/strings.h"
#include "util/yaml_fields.h"
#include "util/yaml_reader.h"

namespace hpclaunch {

namespace {

// node:

const FieldTable<NodeShape> k_node_fields = {
    field("gpus", &NodeShape::gpus, whole_number(0, 64), Shown::always),
    field("gpu_model", &NodeShape::gpu_model, k_text),
    field("cores", &NodeShape::cores, whole_number(1, 4096), Shown::always),
    field("threads_per_core", &NodeShape::threads_per_core, whole_number(1, 8), Shown::always),
    field("memory_gb", &NodeShape::memory_gb, whole_number(0, 1 << 24), Shown::always),
    field("arch", &NodeShape::arch, k_text, Shown::always),
    field("accelerator", &NodeShape::accelerator, one_of(k_accelerator_names), Shown::always),
};

// queues:

// {least nodes: longest time}, sorted by nodes.
const ValueKind<std::vector<std::pair<int, long>>> k_times_by_nodes = {
    [](const Reader& r, const YAML::Node& n, const std::string& name) {
      const char* hint = "write e.g. `max_time_by_nodes: {10: \"03:00:00\", 25: \"06:00:00\"}` (least nodes: time)";
      if (!n.IsMap()) r.fail(n, name, "expected a map of node counts to times", hint);
      std::vector<std::pair<int, long>> out;
      for (auto it = n.begin(); it != n.end(); ++it) {
        int nodes = r.integer(it->first, name, 1, 1 << 20);
        out.emplace_back(nodes, r.time(it->second, name));
      }
      std::sort(out.begin(), out.end());
      return out;
    },
    [](YAML::Emitter& e, const auto& times) {
      e << YAML::BeginMap;
      for (const auto& [nodes, t] : times) e << YAML::Key << nodes << YAML::Value << format_slurm_time(t);
      e << YAML::EndMap;
    }};

const FieldTable<Queue> k_queue_fields = {
    field("name", &Queue::name, k_text, Shown::always),
    field("kind", &Queue::kind, one_of(k_queue_kind_names), Shown::always),
    field("max_time", &Queue::max_time_s, k_time),
    field("max_nodes", &Queue::max_nodes, whole_number(1, 1 << 20)),
    field("max_gpus", &Queue::max_gpus, whole_number(1, 1 << 20)),
    field("min_gpus", &Queue::min_gpus, whole_number(1, 1 << 20)),
    field("default", &Queue::is_default, k_flag),
    field("note", &Queue::note, k_text),
    field("max_time_by_nodes", &Queue::max_time_by_nodes, k_times_by_nodes),
    field("shared", &Queue::shared, k_flag),
    field("segment", &Queue::segment, whole_number(1, 1 << 20)),
    field("segment_options", &Queue::segment_options, k_list),
    field("memory_gb", &Queue::memory_gb, whole_number(1, 1 << 24)),
};

void read_queues(const Reader& r, const YAML::Node& n, const std::string& name, std::vector<Queue>* queues) {
  if (!n.IsSequence()) r.fail(n, name, "expected a list of queues", "write `queues: [{name: gpu, ...}]`");
  queues->clear();
  int defaults = 0;
  for (const auto& q : n) {
    queues->push_back(read_fresh(r, q, name + "[]", k_queue_fields, {"name"}, "give every queue a name"));
    defaults += queues->back().is_default;
    if (defaults > 1) r.fail(q, name + "[].default", "more than one queue is the default", "mark only one");
  }
}

// gpu_request:

const ValueKind<std::vector<int>> k_gpu_counts = {
    [](const Reader& r, const YAML::Node& n, const std::string& name) {
      std::vector<int> out;
      for (const auto& s : r.strings(n, name)) {
        long long v = 0;
        if (!parse_int(s, &v) || v < 1)
          r.fail(n, name, "'" + s + "' is not a GPU count", "write e.g. `gpus_per_node: [1, 4]`");
        out.push_back(static_cast<int>(v));
      }
      return out;
    },
    [](auto& e, const auto& v) { e << YAML::Flow << v; }};

const FieldTable<GpuRequest> k_gpu_fields = {
    field("style", &GpuRequest::style, one_of(gpu_style_names), Shown::always),
    field("type", &GpuRequest::type, k_text),
    field("constraint", &GpuRequest::constraint, k_text),
    field("max_cpus_per_gpu", &GpuRequest::max_cpus_per_gpu, whole_number(1, 4096)),
    field("gpus_per_node", &GpuRequest::gpus_per_node_choices, k_gpu_counts),
};

// account:

void check_regex(const Reader& r, const YAML::Node& n, const std::string& name, const std::string& pattern) {
  try {
    std::regex re(pattern);
  } catch (const std::regex_error& e) {
    r.fail(n, name, std::string("not a valid regular expression: ") + e.what(), "fix the pattern");
  }
}

const EnumNames<std::string> k_account_flags = {{"-A", "-A"}, {"-P", "-P"}};

const FieldTable<AccountRule> k_account_fields = {
    field("required", &AccountRule::required, k_flag, Shown::always),
    field("pattern", &AccountRule::pattern, checked(k_text, check_regex)),
    field("example", &AccountRule::example, k_text),
    field("flag", &AccountRule::flag, one_of(k_account_flags)),
};

// container:

const FieldTable<ContainerImageForm> k_container_image_fields = {
    field("match", &ContainerImageForm::match, checked(k_text, check_regex), Shown::always),
    field("about", &ContainerImageForm::about, k_text),
    field("srun_options", &ContainerImageForm::srun_options, k_list),
    field("edf", &ContainerImageForm::edf, k_lines),
};

void read_container_images(const Reader& r, const YAML::Node& n, const std::string& name,
                           std::vector<ContainerImageForm>* forms) {
  const char* hint = "write `images: [{match: \"alps-images/\", about: \"...\", edf: [...]}]`";
  if (!n.IsSequence()) r.fail(n, name, "expected a list", hint);
  forms->clear();
  for (const auto& v : n) {
    forms->push_back(read_fresh(r, v, name + "[]", k_container_image_fields, {"match"}, hint));
    if (forms->back().srun_options.empty() && forms->back().edf.empty())
      r.fail(v, name + "[]", "an image form that changes nothing", "give its srun_options, its edf lines, or both");
  }
}

const FieldTable<Container> k_container_fields = {
    field("runtime", &Container::runtime, k_text),
    field("directives", &Container::directives, k_list),
    field("wrap", &Container::wrap, k_list),
    field("modules", &Container::modules, k_list),
    field("srun_options", &Container::srun_options, k_list),
    field("edf", &Container::edf, k_lines),
    list_section("images", &Container::images, k_container_image_fields, read_container_images),
    field("sets_network_env", &Container::sets_network_env, k_flag),
};

// A container block is one form: a site file's replaces the base's whole (no wrap left over).
void read_container(const Reader& r, const YAML::Node& n, const std::string& name, Container* c) {
  *c = read_fresh(r, n, name, k_container_fields);
}

bool has_runtime(const Container& c) { return !c.runtime.empty(); }  // written only then

// launch:

const ValueKind<std::vector<LaunchMode>> k_launch_modes = {
    [](const Reader& r, const YAML::Node& n, const std::string& name) {
      if (!n.IsSequence()) r.fail(n, name, "expected a list", "write `allowed: [agent, srun]`");
      std::vector<LaunchMode> out;
      for (const auto& item : n) out.push_back(r.choice(item, name + "[]", launch_mode_names()));
      return out;
    },
    [](YAML::Emitter& e, const std::vector<LaunchMode>& modes) {
      std::vector<std::string> names;
      for (auto m : modes) names.push_back(to_string(m));
      e << YAML::Flow << names;
    }};

// Members of the profile itself.
const FieldTable<SiteProfile> k_launch_fields = {
    field("default", &SiteProfile::default_launcher, one_of(launch_mode_names), Shown::always),
    field("allowed", &SiteProfile::launchers, k_launch_modes, Shown::always),
    field("gpu_bind", &SiteProfile::gpu_bind, one_of(k_gpu_bind_names), Shown::always),
    field("mpirun_modules", &SiteProfile::mpirun_modules, k_list),
};

void read_launch(const Reader& r, const YAML::Node& n, const std::string& name, SiteProfile* p) {
  read_fields(r, n, name, k_launch_fields, p);
  if ((n["default"] || n["allowed"]) && !p->allows(p->default_launcher))
    r.fail(n, "launch.default", std::string("'") + to_string(p->default_launcher) + "' is not in launch.allowed",
           "add it to allowed or pick another default");
}

void write_launch(YAML::Emitter& e, const SiteProfile& p) { write_map(e, k_launch_fields, p); }

// rendezvous:

const FieldTable<Rendezvous> k_rendezvous_fields = {
    field("master_addr", &Rendezvous::master_addr, one_of(k_master_addr_rule_names), Shown::always),
    field("suffix", &Rendezvous::suffix, k_text),
    field("resolve", &Rendezvous::resolve, k_flag, Shown::always),
    field("address", &Rendezvous::fixed_addr, k_text),
    field("port", &Rendezvous::port, whole_number(1024, 65535)),
};

void read_rendezvous(const Reader& r, const YAML::Node& n, const std::string& name, Rendezvous* z) {
  read_fields(r, n, name, k_rendezvous_fields, z);
  if (z->master_addr == MasterAddrRule::fixed && z->fixed_addr.empty())
    r.fail(n, "rendezvous.address", "master_addr is 'fixed' but no address is given", "add `address: 127.0.0.1`");
}

// requeue:

// `signal: USR1@120`: the signal and the seconds before the time limit it comes.
void read_signal(const Reader& r, const YAML::Node& n, const std::string& name, RequeuePolicy* q) {
  std::string err;
  if (!parse_warning_signal(r.scalar(n, name), &q->signal, &q->seconds, &err))
    r.fail(n, name, err, "write e.g. `signal: USR1@120`");
}

void write_signal(YAML::Emitter& e, const RequeuePolicy& q) { e << q.signal + "@" + std::to_string(q.seconds); }

const FieldTable<RequeuePolicy> k_requeue_fields = {
    field("enabled", &RequeuePolicy::enabled, k_flag, Shown::always),
    {"signal", read_signal, write_signal},
    field("max_requeues", &RequeuePolicy::max_requeues, whole_number(0, 1000), Shown::always),
    field("hang_timeout", &RequeuePolicy::hang_timeout, whole_number(0, 1'000'000)),
    field("spares", &RequeuePolicy::spares, whole_number(0, 1 << 20)),
};

// learned:

const FieldTable<Learned> k_learned_fields = {
    field("date", &Learned::date, k_text, Shown::always),
    field("commands", &Learned::commands, k_lines, Shown::always),
};

void read_learned(const Reader& r, const YAML::Node& n, const std::string& name, SiteProfile* p) {
  p->learned = read_fresh(r, n, name, k_learned_fields);
}

void write_learned(YAML::Emitter& e, const SiteProfile& p) { write_map(e, k_learned_fields, *p.learned); }

bool has_learned(const SiteProfile& p) { return p.learned.has_value(); }

// notices:

const FieldTable<Notice> k_notice_fields = {
    field("text", &Notice::text, k_text, Shown::always),
    field("min_nodes", &Notice::min_nodes, whole_number(1, 1 << 20)),
};

void read_notices(const Reader& r, const YAML::Node& n, const std::string& name, std::vector<Notice>* notices) {
  if (!n.IsSequence()) r.fail(n, name, "expected a list", "write `notices: [{text: ..., min_nodes: 6}]`");
  notices->clear();
  for (const auto& item : n)
    notices->push_back(read_fresh(r, item, name + "[]", k_notice_fields, {"text"}, "say what the user must know"));
}

// memory:

const FieldTable<MemoryRequest> k_memory_fields = {
    field("request", &MemoryRequest::style, one_of(k_memory_style_names)),
    field("amount", &MemoryRequest::amount, k_text),
    field("decimal_gb", &MemoryRequest::decimal_gb, k_flag),
};

// One form: a block given replaces the inherited one whole.
void read_memory(const Reader& r, const YAML::Node& n, const std::string& name, MemoryRequest* m) {
  *m = read_fresh(r, n, name, k_memory_fields, {"request"}, "write e.g. `memory: {request: whole-node}`");
  static const std::regex k_amount("[0-9]+[KMGT]?");
  if (m->style == MemoryStyle::per_gpu && !std::regex_match(m->amount, k_amount))
    r.fail(n, "memory.amount", "per-gpu needs an amount like 64G", "write `memory: {request: per-gpu, amount: 64G}`");
}

bool has_request(const MemoryRequest& m) { return m.style != MemoryStyle::unset; }  // written only then

// interconnect:

void check_variable_name(const Reader& r, const YAML::Node& n, const std::string& name, const std::string& var) {
  if (!is_env_name(var)) r.fail(n, name, "'" + var + "' is not a variable name", "use letters, digits and _");
}

const FieldTable<NetworkVar> k_network_var_fields = {
    field("name", &NetworkVar::name, checked(k_text, check_variable_name), Shown::always),
    field("value", &NetworkVar::value, k_text, Shown::always),
    field("source", &NetworkVar::source, k_text, Shown::always),
};

void read_network_vars(const Reader& r, const YAML::Node& n, const std::string& name, std::vector<NetworkVar>* vars) {
  const char* hint = "write `env: [{name: NCCL_CROSS_NIC, value: \"1\", source: \"URL\"}]`";
  if (!n.IsSequence()) r.fail(n, name, "expected a list", hint);
  vars->clear();
  for (const auto& v : n)
    vars->push_back(read_fresh(r, v, name + "[]", k_network_var_fields, {"name", "value", "source"}, hint));
}

const FieldTable<ForbiddenVar> k_forbidden_var_fields = {
    field("name", &ForbiddenVar::name, k_text, Shown::always),
    field("reason", &ForbiddenVar::reason, k_text, Shown::always),
};

void read_forbidden_vars(const Reader& r, const YAML::Node& n, const std::string& name,
                         std::vector<ForbiddenVar>* vars) {
  const char* hint = "write `never_set: [{name: NCCL_NET_PLUGIN, reason: \"... (URL)\"}]`";
  if (!n.IsSequence()) r.fail(n, name, "expected a list", hint);
  vars->clear();
  for (const auto& v : n) {
    r.check_keys(v, name + "[]", keys_of(k_forbidden_var_fields));
    if (!v["name"] || !v["reason"]) r.fail(v, name + "[]", "needs a name and a reason", hint);
    read_present(r, v, name + "[]", k_forbidden_var_fields, &vars->emplace_back());
  }
}

// Its source is written with either figure.
bool has_busbw(const Interconnect& ic) { return ic.busbw_gbs != 0 || ic.nvlink_busbw_gbs != 0; }

const FieldTable<Interconnect> k_interconnect_fields = {
    field("name", &Interconnect::name, k_text),
    field("busbw_gbs", &Interconnect::busbw_gbs, whole_number(1, 100000)),
    field("nvlink_busbw_gbs", &Interconnect::nvlink_busbw_gbs, whole_number(1, 100000)),
    shown_if(field("source", &Interconnect::busbw_source, k_text), has_busbw),
    list_section("env", &Interconnect::env, k_network_var_fields, read_network_vars),
    list_section("never_set", &Interconnect::never_set, k_forbidden_var_fields, read_forbidden_vars),
};

void read_interconnect(const Reader& r, const YAML::Node& n, const std::string& name, Interconnect* ic) {
  read_fields(r, n, name, k_interconnect_fields, ic);
  if (has_busbw(*ic) && ic->busbw_source.empty())
    r.fail(n, "interconnect", std::string(ic->busbw_gbs ? "busbw_gbs" : "nvlink_busbw_gbs") + " without a source",
           "add `source:` (where the figure was measured or published)");
}

// The top level.

void check_release(const Reader& r, const YAML::Node& n, const std::string& name, const std::string& v) {
  if (!parse_release(v)) r.fail(n, name, "'" + v + "' is not a release", "write e.g. `scheduler_version: \"24.11\"`");
}

void check_byte_size(const Reader& r, const YAML::Node& n, const std::string& name, const std::string& v) {
  if (!parse_byte_size(v)) r.fail(n, name, "'" + v + "' is not a size", "write e.g. `" + name + ": 512M` (K, M, G, T: powers of 1024)");
}

void check_login_host(const Reader& r, const YAML::Node& n, const std::string& name, const std::string& v) {
  std::string why;
  if (!parse_ssh_target(v, &why))
    r.fail(n, name, "'" + v + "' is no ssh target: " + why, "write [USER@]HOST[:PORT], e.g. `login_host: login.example.org`");
}

const EnumNames<std::string> k_statuses = {{"active", "active"}, {"retired", "retired"}};

const ValueKind<std::vector<std::pair<std::string, std::string>>> k_env_map = {
    [](const Reader& r, const YAML::Node& n, const std::string& name) { return r.env_map(n, name); },
    [](YAML::Emitter& e, const auto& env) {
      e << YAML::BeginMap;
      for (const auto& [k, v] : env) e << YAML::Key << k << YAML::Value << v;
      e << YAML::EndMap;
    }};

// In the order the keys were added, which error messages list; `name`, `extends` and `variants` are read by
// read_profiles, and the last two not written (a profile shown is resolved).
const FieldTable<SiteProfile> k_top_fields = {
    {"name", nullptr, [](YAML::Emitter& e, const SiteProfile& p) { e << p.name; }},
    field("title", &SiteProfile::title, k_text),
    field("status", &SiteProfile::status, one_of(k_statuses), Shown::always),
    field("retired_on", &SiteProfile::retired_on, k_text),
    field("successors", &SiteProfile::successors, k_list),
    {"extends"},
    field("scheduler", &SiteProfile::scheduler, one_of(scheduler_names), Shown::always),
    field("scheduler_version", &SiteProfile::scheduler_version, checked(k_text, check_release)),
    section("node", &SiteProfile::node, k_node_fields),
    list_section("queues", &SiteProfile::queues, k_queue_fields, read_queues),
    section("gpu_request", &SiteProfile::gpu, k_gpu_fields),
    section("account", &SiteProfile::account, k_account_fields, {.order = {"required", "pattern", "flag"}}),
    field("modules", &SiteProfile::modules, k_list),
    field("setup", &SiteProfile::setup, k_lines),
    section("container", &SiteProfile::container, k_container_fields, {.read = read_container, .shown = has_runtime}),
    field("env", &SiteProfile::env, k_env_map),
    {"launch", read_launch, write_launch},
    section("rendezvous", &SiteProfile::rendezvous, k_rendezvous_fields, {.read = read_rendezvous}),
    section("requeue", &SiteProfile::requeue, k_requeue_fields, {.flow = true}),
    field("scratch", &SiteProfile::scratch, k_list),
    field("directives", &SiteProfile::directives, k_list),
    field("sources", &SiteProfile::sources, k_lines),
    {"learned", read_learned, write_learned, has_learned},
    field("submit_check", &SiteProfile::submit_check, k_flag),
    field("unverified", &SiteProfile::unverified, k_lines),
    section("memory", &SiteProfile::memory, k_memory_fields, {.read = read_memory, .shown = has_request, .flow = true}),
    field("scratch_only", &SiteProfile::scratch_only, k_flag),
    {"variants"},
    section("interconnect", &SiteProfile::interconnect, k_interconnect_fields, {.read = read_interconnect}),
    field("account_directives", &SiteProfile::account_directives, k_list),
    list_section("notices", &SiteProfile::notices, k_notice_fields, read_notices),
    field("arrays", &SiteProfile::arrays, k_flag),
    field("snapshot", &SiteProfile::snapshot, k_flag),
    field("snapshot_exclude", &SiteProfile::snapshot_exclude, k_list),
    field("snapshot_max_size", &SiteProfile::snapshot_max_size, checked(k_text, check_byte_size)),
    field("login_host", &SiteProfile::login_host, checked(k_text, check_login_host)),
};

// The order `sites show` writes the top level in, what belongs together side by side (k_top_fields's is the order
// the keys were added in); a key not named here is written after these.
const std::vector<std::string> k_top_write_order = {
    "name", "title", "status", "retired_on", "successors", "scheduler", "scheduler_version", "node", "queues", "gpu_request", "account",
    "modules", "setup", "container", "env", "launch", "rendezvous", "requeue", "scratch", "directives",
    "account_directives", "arrays", "notices", "sources", "memory", "unverified", "scratch_only", "interconnect",
    "submit_check", "snapshot", "snapshot_exclude", "snapshot_max_size", "login_host", "learned"};

// A scheduler's own block (`slurm: {rank_options: [...]}`): read as texts and lists here, its keys checked against
// what its dialect declares in check_consistent; each key given replaces the inherited one.
void read_scheduler_block(const Reader& r, const YAML::Node& n, const std::string& name, SiteProfile* p) {
  const std::string mine = to_string(p->scheduler);
  if (name != mine)
    r.fail(n, name, "options of " + name + ", but the scheduler is " + mine, "rename the block `" + mine + ":`, or remove it");
  r.expect_map(n, name);
  for (auto it = n.begin(); it != n.end(); ++it) {
    const std::string key = name + "." + it->first.Scalar();
    SchedulerOption option;
    option.list = it->second.IsSequence();
    if (option.list) option.values = k_list.read(r, it->second, key);
    else option.values = {r.scalar(it->second, key)};
    p->scheduler_options[it->first.Scalar()] = option;
  }
}

void write_scheduler_block(YAML::Emitter& e, const SiteProfile& p) {
  e << YAML::BeginMap;
  for (const auto& [key, option] : p.scheduler_options) {
    e << YAML::Key << key << YAML::Value;
    if (option.list) k_list.write(e, option.values);
    else e << option.values.front();
  }
  e << YAML::EndMap;
}

// The top level's keys: the table's, and a block for each scheduler, shown for the profile's own.
const FieldTable<SiteProfile>& top_fields() {
  static const FieldTable<SiteProfile> fields = [] {
    FieldTable<SiteProfile> out = k_top_fields;
    for (const auto& entry : scheduler_names()) {
      const std::string name = entry.first;  // a copy the lambda may capture (not a structured binding)
      out.push_back({name, read_scheduler_block, write_scheduler_block, [name](const SiteProfile& p) {
                       return to_string(p.scheduler) == name && !p.scheduler_options.empty();
                     }});
    }
    return out;
  }();
  return fields;
}

// Sets every field present in `root` on `p`, leaving the others as they are (a base or `extends:` profile).
void apply(const Reader& r, const YAML::Node& root, SiteProfile* p, bool is_variant) {
  std::vector<std::string> keys = keys_of(top_fields());
  if (is_variant) keys.erase(std::remove(keys.begin(), keys.end(), "variants"), keys.end());
  r.check_keys(root, "", keys);
  read_present(r, root, "", top_fields(), p);
}

// The scheduler's block against the keys its dialect declares: each known, a list or a text as declared, each
// value as its check says, and a launcher's binding only where the site allows that launcher.
void check_scheduler_options(const Reader& r, const YAML::Node& at, const SiteProfile& p, const SchedulerChecks& checks) {
  if (!checks.options || p.scheduler_options.empty()) return;
  const std::string mine = to_string(p.scheduler);
  const std::vector<SchedulerOptionSpec> specs = checks.options(p.scheduler);
  const YAML::Node block = at.IsMap() ? at[mine] : YAML::Node();
  for (const auto& entry : p.scheduler_options) {
    const std::string& key = entry.first;  // not a structured binding: the lambda below captures it
    const SchedulerOption& option = entry.second;
    // Where this document gives it; else it came from the profile this one extends.
    const YAML::Node here = block && block.IsMap() && block[key] ? block[key] : at;
    const std::string name = mine + "." + key;
    auto spec = std::find_if(specs.begin(), specs.end(), [&](const SchedulerOptionSpec& s) { return s.key == key; });
    if (spec == specs.end()) {
      std::vector<std::string> known;
      for (const auto& s : specs) known.push_back(s.key);
      r.fail(here, name, "not an option of " + mine,
             known.empty() ? "remove it: " + mine + " has no options of its own" : "remove it or use one of: " + join(known, ", "));
    }
    if (option.list != spec->list)
      r.fail(here, name, spec->list ? "expected a list" : "expected a single value",
             spec->list ? "write `" + key + ": [VALUE, ...]`" : "write `" + key + ": VALUE`");
    if (spec->check)
      for (const auto& v : option.values)
        if (auto [what, fix] = spec->check(v); !what.empty()) r.fail(here, name, what, fix);
    if (spec->launcher && !p.allows(*spec->launcher))
      r.fail(here, name, fmt::format("given, but the site allows no {} launch (its scheduler is {})", to_string(*spec->launcher), mine),
             fmt::format("remove it, or allow {}", to_string(*spec->launcher)));
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
  // A profile narrows what its scheduler can do; `arrays: true` cannot give arrays to one that has none.
  if (const YAML::Node arrays = at.IsMap() ? at["arrays"] : YAML::Node(); arrays && p.arrays && checks.arrays)
    if (std::string why = checks.arrays(p.scheduler); !why.empty())
      r.fail(arrays, "arrays", why, "write `arrays: false`, or leave it out");
  if (p.retired() && p.successors.empty())
    r.fail(at, "successors", "a retired site must name its successors", "add `successors: [NAME]`");
  if (p.node.gpus > 0 && p.node.cores < p.node.gpus)
    r.fail(at, "node.cores", "fewer cores than GPUs", "check node.cores and node.gpus");
  check_scheduler_options(r, at, p, checks);
  // A container given as srun options runs only where the scheduler's steps are srun's.
  if (!p.container.srun_options.empty() && checks.launcher && !checks.launcher(p.scheduler, LaunchMode::srun).empty())
    r.fail(at, "container.srun_options", "the scheduler is " + std::string(to_string(p.scheduler)) +
                                             ", whose jobs start no srun steps to run the container",
           "use container.wrap (e.g. [apptainer, exec, \"{gpu_flag}\", \"{image}\"]) or directives");
  if (!p.container.edf.empty() && p.container.srun_options.empty())
    r.fail(at, "container.edf", "an EDF file that no srun option names", "add `srun_options: [\"--environment={edf}\"]`");
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
  write_map(e, top_fields(), p, {.order = k_top_write_order});
  return std::string(e.c_str()) + "\n";
}

}  // namespace hpclaunch
