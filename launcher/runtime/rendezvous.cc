// MASTER_ADDR / MASTER_PORT choice (see rendezvous.h for the precedence and the port formula).
#include "runtime/rendezvous.h"

#include <fmt/core.h>

#include <cstdint>

#include "dialect/in_job.h"
#include "runtime/ranks.h"
#include "util/enum_names.h"
#include "util/error.h"
#include "util/strings.h"

namespace hpclaunch {

namespace {

int parse_port(std::string_view value, std::string_view where) {
  long long port = 0;
  if (!parse_int(value, &port) || port < 1 || port > 65535)
    throw Error(std::string(where), fmt::format("'{}' is not a port number (1-65535)", value),
                "pass a free TCP port, e.g. 29500");
  return static_cast<int>(port);
}

}  // namespace

MasterAddrRule parse_master_addr_rule(std::string_view s, std::string_view where) {
  if (auto rule = value_of(k_master_addr_rule_names, s)) return *rule;
  throw Error(std::string(where),
              fmt::format("unknown master address rule '{}'{}", s, did_you_mean(s, names_of(k_master_addr_rule_names))),
              "use first-node, batch-host or fixed");
}

MasterAddrPolicy master_addr_policy_from_env(const Env& env) {
  MasterAddrPolicy p;
  if (auto rule = env_get(env, "HPCLAUNCH_MASTER_ADDR_RULE"); rule && !rule->empty())
    p.rule = parse_master_addr_rule(*rule, "HPCLAUNCH_MASTER_ADDR_RULE");
  p.suffix = env_get(env, "HPCLAUNCH_MASTER_ADDR_SUFFIX").value_or("");
  if (auto resolve = env_get(env, "HPCLAUNCH_MASTER_ADDR_RESOLVE"); resolve && !resolve->empty()) {
    if (*resolve != "0" && *resolve != "1")
      throw Error("HPCLAUNCH_MASTER_ADDR_RESOLVE", fmt::format("'{}' is not 0 or 1", *resolve),
                  "set 1 to resolve the host name to an IPv4 address, 0 to pass the name");
    p.resolve = *resolve == "1";
  }
  p.fixed = env_get(env, "HPCLAUNCH_MASTER_ADDR_FIXED").value_or("");
  // No rule exported, and the job's face knows the one address (`hpclaunch local-srun` by hand, without the local
  // profile's exports: its node names do not resolve and all its nodes are this machine).
  const InJobFace* face = job_face(env);
  if (auto addr = face ? face->default_master_addr(env) : std::nullopt; addr && !env_has(env, "HPCLAUNCH_MASTER_ADDR_RULE")) {
    p.rule = MasterAddrRule::fixed;
    if (p.fixed.empty()) p.fixed = *addr;
  }
  return p;
}

std::string master_addr_by_rule(const MasterAddrPolicy& policy, const std::vector<std::string>& step_nodes,
                                const std::vector<std::string>& job_nodes, const Resolver& resolve) {
  std::string host;
  std::string origin;
  if (policy.rule == MasterAddrRule::fixed) {
    if (policy.fixed.empty())
      throw Error("HPCLAUNCH_MASTER_ADDR_FIXED", "empty, but the master address rule is 'fixed'",
                  "set it to the address, or use --master-addr");
    host = policy.fixed;
    origin = "the fixed address";
  } else {
    const auto& nodes = policy.rule == MasterAddrRule::first_node ? step_nodes : job_nodes;
    if (nodes.empty())
      throw Error("MASTER_ADDR",
                  fmt::format("unset, and the {} rule has no node list (no SLURM_JOB_NODELIST, PBS_NODEFILE or "
                              "HPCLAUNCH_NODELIST here)",
                              to_string(policy.rule)),
                  "export MASTER_ADDR (e.g. mpirun -x MASTER_ADDR=$(hostname)) or pass --master-addr");
    host = nodes.front() + policy.suffix;
    origin = policy.suffix.empty() ? fmt::format("the {} rule's host", to_string(policy.rule))
                                   : fmt::format("the {} rule's host '{}' + suffix '{}'", to_string(policy.rule),
                                                 nodes.front(), policy.suffix);
  }
  // Resolved even when the name is kept: a name that does not resolve fails later in torch, far from here.
  std::optional<std::string> ip = resolve(host);
  if (!ip)
    throw Error("MASTER_ADDR",
                fmt::format("'{}' ({}) does not resolve to an IPv4 address", host, origin),
                policy.suffix.empty() ? "check the node's name, or pass --master-addr ADDRESS"
                                      : "check HPCLAUNCH_MASTER_ADDR_SUFFIX, or pass --master-addr ADDRESS");
  return policy.resolve ? *ip : host;
}

std::string choose_master_addr(const Env& env, const std::optional<std::string>& flag,
                               const MasterAddrPolicy& policy, const std::vector<std::string>& step_nodes,
                               const std::vector<std::string>& job_nodes, const Resolver& resolve) {
  if (auto existing = env_get(env, "MASTER_ADDR"); existing && !existing->empty()) return *existing;
  if (flag) {
    if (flag->empty()) throw Error("--master-addr", "empty", "pass a host name or an address");
    return *flag;
  }
  return master_addr_by_rule(policy, step_nodes, job_nodes, resolve);
}

std::string master_addr_from_env(const Env& env, const std::optional<std::string>& flag, const FileReader& read_file,
                                 const Resolver& resolve, const CommandReader& run) {
  MasterAddrPolicy policy = master_addr_policy_from_env(env);  // checked even when unused: typos surface early
  if (env_get(env, "MASTER_ADDR").value_or("") != "" || flag) return choose_master_addr(env, flag, policy, {}, {}, resolve);
  return choose_master_addr(env, flag, policy, step_nodes(env, read_file, run), job_nodes(env, read_file, run), resolve);
}

int derive_master_port(std::string_view job_id) {
  if (job_id.empty()) return k_master_port_no_job;
  uint32_t n = 0;
  size_t digits = 0;
  while (digits < job_id.size() && job_id[digits] >= '0' && job_id[digits] <= '9')
    n = (n * 10 + static_cast<uint32_t>(job_id[digits++] - '0')) % k_master_port_span;
  if (digits == 0) {
    uint32_t h = 2166136261u;  // FNV-1a, 32 bit
    for (char c : job_id) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
    n = h % k_master_port_span;
  }
  return k_master_port_base + static_cast<int>(n);
}

int choose_master_port(const Env& env, std::optional<int> flag, std::string_view job_id) {
  if (auto existing = env_get(env, "MASTER_PORT"); existing && !existing->empty())
    return parse_port(*existing, "MASTER_PORT");
  if (flag) return parse_port(std::to_string(*flag), "--master-port");
  std::optional<long long> task;
  if (auto text = env_get(env, "HPCLAUNCH_ARRAY_TASK"); text && !text->empty()) {
    long long t = 0;
    if (!parse_int(*text, &t) || t < 0 || t >= k_master_port_span)
      throw Error("HPCLAUNCH_ARRAY_TASK", fmt::format("'{}' is not an array task index (0-{})", *text, k_master_port_span - 1),
                  "it is set by hpclaunch's array script; unset it outside one");
    task = t;
  }
  if (auto profile = env_get(env, "HPCLAUNCH_MASTER_PORT"); profile && !profile->empty()) {
    int port = parse_port(*profile, "HPCLAUNCH_MASTER_PORT");
    return task ? parse_port(std::to_string(port + *task), "HPCLAUNCH_MASTER_PORT + HPCLAUNCH_ARRAY_TASK") : port;
  }
  if (!task) return derive_master_port(job_id);
  const InJobFace* face = job_face(env);
  std::optional<JobArrayTask> array = face ? face->array_task(env) : std::nullopt;
  std::string array_id = array ? array->array_id : std::string(job_id);
  int base = derive_master_port(array_id) - k_master_port_base;
  return k_master_port_base + static_cast<int>((base + *task) % k_master_port_span);
}

PortBand worker_port_band(std::string_view ip_local_port_range) {
  std::string_view text = trim(ip_local_port_range);
  text = text.substr(0, text.find_first_of(" \t"));
  long long first_ephemeral = 0;
  if (!parse_int(text, &first_ephemeral) || first_ephemeral > 65536) return {};
  if (first_ephemeral - k_worker_port_low < 100) return {};
  return {k_worker_port_low, static_cast<int>(first_ephemeral)};
}

}  // namespace hpclaunch
