#include "plan/job_spec.h"

#include "util/yaml_reader.h"

namespace hpclaunch {

void read_job_spec(const std::string& file, const std::string& text, JobRequest* r) {
  Reader rd(file);
  YAML::Node root = rd.load_map(text, "a job spec", "write `key: value` lines, e.g. `site: local`");
  rd.check_keys(root, "", {"description", "site", "nodes", "gpus_per_node", "time", "account", "partition", "qos",
                           "constraint", "launcher", "name", "container", "modules", "env", "requeue", "signal",
                           "max_requeues", "preflight", "command"});
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
  if (root["requeue"]) r->requeue = rd.boolean(root["requeue"], "requeue");
  if (root["preflight"]) r->preflight = rd.boolean(root["preflight"], "preflight");
  if (root["modules"]) r->modules = rd.strings(root["modules"], "modules");
  if (root["env"]) {
    r->env.clear();
    for (const auto& [key, value] : rd.env_map(root["env"], "env")) r->env.push_back(key + "=" + value);
  }
  if (root["command"]) {
    r->command = rd.strings(root["command"], "command");
    if (r->command.empty()) rd.fail(root["command"], "command", "is empty", "list the program and its arguments");
  }
}

}  // namespace hpclaunch
