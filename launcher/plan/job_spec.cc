#include "plan/job_spec.h"

#include "util/byte_size.h"
#include "util/yaml_reader.h"

namespace hpclaunch {

namespace {

// `array: N`, `sweep: {KEY: [V1, V2]}`, `sweep_zip: true`, `max_concurrent: M`; errors name the spec's position.
void read_array(const Reader& rd, const YAML::Node& root, ArrayRequest* a) {
  if (root["array"]) {
    a->count = rd.integer(root["array"], "array", 1, k_max_array_tasks);
    a->count_origin = rd.where(root["array"].Mark());
  }
  if (root["sweep_zip"]) {
    a->zip = rd.boolean(root["sweep_zip"], "sweep_zip");
    a->zip_origin = rd.where(root["sweep_zip"].Mark());
  }
  if (root["max_concurrent"]) {
    a->max_concurrent = rd.integer(root["max_concurrent"], "max_concurrent", 1, k_max_array_tasks);
    a->max_origin = rd.where(root["max_concurrent"].Mark());
  }
  if (!root["sweep"]) return;
  const YAML::Node& sweep = root["sweep"];
  if (!sweep.IsMap() || sweep.size() == 0)
    rd.fail(sweep, "sweep", "expected a mapping of keys to lists of values", "write e.g. `sweep: {lr: [1e-3, 3e-3]}`");
  a->sweep.clear();
  for (auto it = sweep.begin(); it != sweep.end(); ++it) {
    SweepAxis axis;
    axis.key = it->first.Scalar();
    axis.origin = rd.where(it->first.Mark());
    std::string field = "sweep." + axis.key;
    if (std::string bad = check_sweep_key(axis.key); !bad.empty())
      rd.fail(it->first, "sweep", bad, "use letters, digits, '-' and '_', starting with a letter");
    // A copy: `it->second` lives in a proxy that dies with the expression, so a range-for over it read a dead
    // temporary (ASan's stack-use-after-scope in t0060).
    const YAML::Node values = it->second;
    if (!values.IsSequence() || values.size() == 0)
      rd.fail(values, field, "expected a list of values", "write it as `" + axis.key + ": [V1, V2]`");
    for (const auto& v : values) {
      axis.values.push_back(rd.scalar(v, field + "[]"));
      if (axis.values.back().empty()) rd.fail(v, field + "[]", "is empty", "give a value, or remove it");
    }
    a->sweep.push_back(axis);
  }
}

}  // namespace

void read_job_spec(const std::string& file, const std::string& text, JobRequest* r) {
  Reader rd(file);
  YAML::Node root = rd.load_map(text, "a job spec", "write `key: value` lines, e.g. `site: local`");
  rd.check_keys(root, "", {"description", "site", "nodes", "gpus_per_node", "time", "account", "partition", "qos",
                           "constraint", "launcher", "name", "container", "modules", "env", "requeue", "signal",
                           "max_requeues", "hang_timeout", "spares", "segment", "exclusive_topo", "preflight", "snapshot", "snapshot_exclude", "snapshot_max_size", "array", "sweep", "sweep_zip", "max_concurrent", "command"});
  auto str = [&](const char* key, std::string* out) {
    if (root[key]) *out = rd.scalar(root[key], key);
  };
  str("site", &r->site);
  str("time", &r->time);
  str("account", &r->account);
  str("partition", &r->partition);
  str("qos", &r->qos);
  str("constraint", &r->constraint);
  str("launcher", &r->launcher);
  str("name", &r->name);
  str("container", &r->container);
  str("signal", &r->signal);
  if (root["nodes"]) r->nodes = rd.integer(root["nodes"], "nodes", 1, 1 << 20);
  if (root["gpus_per_node"]) r->gpus_per_node = rd.integer(root["gpus_per_node"], "gpus_per_node", 0, 64);
  if (root["max_requeues"]) r->max_requeues = rd.integer(root["max_requeues"], "max_requeues", 0, 1000);
  if (root["hang_timeout"]) r->hang_timeout = rd.integer(root["hang_timeout"], "hang_timeout", 0, 1'000'000);
  if (root["spares"]) r->spares = rd.integer(root["spares"], "spares", 0, 1 << 20);
  if (root["segment"]) r->segment = rd.integer(root["segment"], "segment", 0, 1 << 20);
  if (root["exclusive_topo"]) r->exclusive_topo = rd.boolean(root["exclusive_topo"], "exclusive_topo");
  if (root["requeue"]) r->requeue = rd.boolean(root["requeue"], "requeue");
  if (root["preflight"]) r->preflight = rd.boolean(root["preflight"], "preflight");
  if (root["snapshot"]) r->snapshot = rd.boolean(root["snapshot"], "snapshot");
  if (root["snapshot_exclude"]) r->snapshot_exclude = rd.strings(root["snapshot_exclude"], "snapshot_exclude");
  if (root["snapshot_max_size"]) {
    r->snapshot_max_size = rd.scalar(root["snapshot_max_size"], "snapshot_max_size");
    if (!parse_byte_size(r->snapshot_max_size))
      rd.fail(root["snapshot_max_size"], "snapshot_max_size", "'" + r->snapshot_max_size + "' is not a size",
              "write e.g. `snapshot_max_size: 512M` (K, M, G, T: powers of 1024)");
    r->snapshot_max_size_origin = rd.where(root["snapshot_max_size"].Mark());
  }
  if (root["modules"]) r->modules = rd.strings(root["modules"], "modules");
  if (root["env"]) {
    r->env.clear();
    for (const auto& [key, value] : rd.env_map(root["env"], "env")) r->env.push_back(key + "=" + value);
  }
  read_array(rd, root, &r->array);
  if (root["command"]) {
    r->command = rd.strings(root["command"], "command");
    if (r->command.empty()) rd.fail(root["command"], "command", "is empty", "list the program and its arguments");
  }
}

}  // namespace hpclaunch
