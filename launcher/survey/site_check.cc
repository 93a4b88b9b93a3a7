#include "survey/site_check.h"

#include <fmt/core.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "plan/plan.h"
#include "util/error.h"
#include "util/strings.h"
#include "util/time_limit.h"

namespace hpclaunch {

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::ok: return "ok";
    case Verdict::mismatch: return "mismatch";
    case Verdict::unknown: return "unknown";
  }
  return "?";
}

namespace {

std::string time_text(long s) { return s ? format_slurm_time(s) : "unlimited"; }
std::string count_text(int n) { return n ? std::to_string(n) : "unlimited"; }

// A limit the profile plans with against the scheduler's. Planning past the scheduler's limit gets jobs
// refused (fatal); planning below it only wastes what the site allows.
CheckRow compare_limit(const std::string& item, long profile, long cluster, const std::string& profile_text,
                       const std::string& cluster_text, const std::string& field) {
  CheckRow row{item, profile_text, cluster_text, Verdict::ok, false, ""};
  if (profile == cluster) return row;
  row.verdict = Verdict::mismatch;
  if (cluster == 0) {
    row.fix = "the scheduler allows more: raise " + field + " or drop it";
  } else if (profile == 0 || profile > cluster) {
    row.fatal = true;
    row.fix = "set " + field + " to " + cluster_text + ": longer or larger jobs are refused";
  } else {
    row.fix = "the scheduler allows " + cluster_text + ": raise " + field + " to match";
  }
  return row;
}

std::vector<const NodeInfo*> gpu_nodes(const SiteProfile& profile, const ClusterInfo& cluster) {
  // The nodes a job of this profile lands on: those of its default partition, else every node with GPUs.
  if (const Queue* q = profile.default_queue(); q && q->kind != QueueKind::qos)
    if (const PartitionInfo* p = cluster.find_partition(q->name)) return cluster.nodes_of(*p);
  std::vector<const NodeInfo*> out;
  for (const auto& n : cluster.nodes)
    if (profile.node.gpus == 0 || n.gpus() > 0) out.push_back(&n);
  return out;
}

// The smallest value of `field` over `nodes`, and the distinct values as text ("64" or "48..64").
std::pair<long, std::string> least(const std::vector<const NodeInfo*>& nodes, long (*field)(const NodeInfo&)) {
  std::set<long> values;
  for (const auto* n : nodes) values.insert(field(*n));
  if (values.empty()) return {0, "?"};
  std::string text = std::to_string(*values.begin());
  if (values.size() > 1) text += ".." + std::to_string(*values.rbegin());
  return {*values.begin(), text};
}

void check_queues(const SiteProfile& profile, const ClusterInfo& cluster, std::vector<CheckRow>* rows) {
  std::vector<std::string> names;
  for (const auto& p : cluster.partitions) names.push_back(p.name);
  const char* field_kind = to_string(dialect_for(cluster.scheduler).queue_kind());  // "partition", "queue"
  for (const auto& q : profile.queues) {
    if (q.kind == QueueKind::qos) {
      std::string item = "qos " + q.name;
      if (!cluster.qos) {
        rows->push_back({item, "exists", "?", Verdict::unknown, false, "accounting did not answer (sacctmgr): ask the site"});
      } else if (std::find(cluster.qos->begin(), cluster.qos->end(), q.name) == cluster.qos->end()) {
        rows->push_back({item, "exists", "not among yours: " + join(*cluster.qos, ", "), Verdict::mismatch, true,
                         "drop the QOS from the profile or ask the site for access"});
      } else {
        rows->push_back({item, "exists", "yours", Verdict::ok, false, ""});
      }
      continue;
    }
    if (q.kind == QueueKind::automatic) continue;
    std::string item = std::string(field_kind) + " " + q.name;
    const PartitionInfo* p = cluster.find_partition(q.name);
    if (!p) {
      rows->push_back({item, "exists", "absent (there: " + join(names, ", ") + ")", Verdict::mismatch, true,
                       "rename or remove the queue in the profile" + did_you_mean(q.name, names)});
      continue;
    }
    rows->push_back({item, "exists", "exists", Verdict::ok, false, ""});
    rows->push_back(compare_limit(item + " max_time", q.max_time_s, p->max_time_s, time_text(q.max_time_s),
                                  time_text(p->max_time_s), "max_time of queue " + q.name));
    rows->push_back(compare_limit(item + " max_nodes", q.max_nodes, p->max_nodes, count_text(q.max_nodes),
                                  count_text(p->max_nodes), "max_nodes of queue " + q.name));
  }
}

// What the jobs a profile renders ask of one node: the most GPUs, CPUs and memory over a full-node job and each
// smaller GPU count the profile allows, planned as `submit` plans them (make_plan). The profile's node facts
// matter to a job only through these requests.
struct NodeAsk {
  int gpus = 0;
  int cpus = 0;
  long memory_mb = 0;     // 0: none asked, or the whole node (--mem=0)
  std::string memory;     // the directive that asks it, e.g. "--mem-per-gpu=64G with 3 GPU(s)"
  std::string memory_all; // every memory directive seen, e.g. "--mem=0, --mem-per-gpu=64G"
};

NodeAsk rendered_ask(const SiteProfile& profile) {
  NodeAsk ask;
  std::set<std::string> seen;
  for (int g = profile.node.gpus; g >= std::min(1, profile.node.gpus); --g) {
    JobRequest r;
    r.site = profile.name;
    r.nodes = 1;
    r.gpus_per_node = g;
    r.command = {"true"};
    r.account = profile.account.example.empty() ? "account" : profile.account.example;
    try {
      LaunchPlan p = make_plan(r, profile);
      ask.gpus = std::max(ask.gpus, p.gpus_per_node);
      ask.cpus = std::max(ask.cpus, p.cpus_per_node);
      if (!p.memory.empty() && seen.insert(p.memory).second)
        ask.memory_all += (ask.memory_all.empty() ? "" : ", ") + p.memory;
      if (p.memory_mb_per_node > ask.memory_mb) {
        ask.memory_mb = p.memory_mb_per_node;
        ask.memory = fmt::format("{} with {} GPU(s)", p.memory, g);
      }
    } catch (const Error&) {
      // a GPU count this profile refuses (Trillium: 1 or 4) renders no script
    }
  }
  return ask;
}

// A node fact the profile states: a FAIL only when what the rendered jobs ask is more than the nodes have
// (`asked` > the nodes' least); any other difference is a warning with the fix.
void check_node_field(const std::string& item, long profile, std::pair<long, std::string> cluster, const std::string& fix_field,
                      long asked, const std::string& asked_text, std::vector<CheckRow>* rows) {
  CheckRow row{item, std::to_string(profile), cluster.second, Verdict::ok, false, ""};
  if (asked > cluster.first) {
    row.verdict = Verdict::mismatch;
    row.fatal = true;
    row.fix = fmt::format("jobs this profile renders ask {} a node, more than the nodes have: set {} to {}", asked_text,
                          fix_field, profile > cluster.first ? std::to_string(cluster.first) : "match the nodes");
  } else if (profile > cluster.first) {
    row.verdict = Verdict::mismatch;
    row.fix = fmt::format("set {} to {} (no job this profile renders asks more than {}, so none is refused)", fix_field,
                          cluster.first, asked_text);
  } else if (profile < cluster.first) {
    row.verdict = Verdict::mismatch;
    row.fix = "the nodes have " + cluster.second + ": set " + fix_field + " to use them";
  }
  rows->push_back(row);
}

void check_nodes(const SiteProfile& profile, const ClusterInfo& cluster, std::vector<CheckRow>* rows) {
  std::vector<const NodeInfo*> nodes = gpu_nodes(profile, cluster);
  if (nodes.empty()) {
    rows->push_back({"nodes", "GPU nodes", "none found", Verdict::mismatch, true,
                     "check the profile's default queue; `hpclaunch sites learn` writes one from what is there"});
    return;
  }
  const NodeAsk ask = rendered_ask(profile);
  check_node_field("node.gpus", profile.node.gpus, least(nodes, [](const NodeInfo& n) { return long(n.gpus()); }),
                   "node.gpus", ask.gpus, fmt::format("{} GPU(s)", ask.gpus), rows);
  // CPUs are asked as cores x threads per core (capped per GPU): compare that with the nodes' CPUs, and the two
  // facts it is made of only as warnings.
  auto cpus = least(nodes, [](const NodeInfo& n) { return long(n.cpus); });
  const std::string cpus_text = fmt::format("{} CPUs", ask.cpus);
  check_node_field("node.cores", profile.node.cores, least(nodes, [](const NodeInfo& n) { return long(n.cores()); }),
                   "node.cores", ask.cpus > cpus.first ? ask.cpus : 0, cpus_text, rows);
  check_node_field("node.threads_per_core", profile.node.threads_per_core,
                   least(nodes, [](const NodeInfo& n) { return long(n.threads_per_core); }), "node.threads_per_core", 0,
                   cpus_text, rows);
  if (profile.node.memory_gb > 0 || ask.memory_mb > 0) {
    auto mem = least(nodes, [](const NodeInfo& n) { return n.memory_mb / 1024; });
    CheckRow row{"node.memory_gb", std::to_string(profile.node.memory_gb), mem.second, Verdict::ok, false, ""};
    const long least_mb = least(nodes, [](const NodeInfo& n) { return n.memory_mb; }).first;
    const std::string asks = ask.memory_all.empty() ? "no memory" : ask.memory_all;
    if (ask.memory_mb > least_mb) {
      row.verdict = Verdict::mismatch;
      row.fatal = true;
      row.fix = fmt::format("jobs ask {} ({} MB a node), more than the nodes' RealMemory {} MB: set node.memory_gb to "
                            "at most {}{}", ask.memory, ask.memory_mb, least_mb, mem.first,
                            profile.memory.style == MemoryStyle::per_gpu ? " and lower memory.amount" : "");
    } else if (profile.node.memory_gb > mem.first) {
      row.verdict = Verdict::mismatch;
      row.fix = fmt::format("set node.memory_gb to at most {} (the scheduler's RealMemory); the jobs ask {}, which fits",
                            mem.first, asks);
    }
    rows->push_back(row);
  }
  if (profile.gpu.style == GpuStyle::gres && !profile.gpu.type.empty()) {
    std::set<std::string> types;
    for (const auto* n : nodes)
      for (const auto& g : n->gres)
        if (g.name == "gpu" && !g.type.empty()) types.insert(g.type);
    std::vector<std::string> listed(types.begin(), types.end());
    bool found = types.count(profile.gpu.type) > 0;
    rows->push_back({"gpu_request.type", profile.gpu.type, listed.empty() ? "untyped" : join(listed, ", "),
                     found ? Verdict::ok : Verdict::mismatch, !found,
                     found ? "" : "set gpu_request.type to one the nodes have" + did_you_mean(profile.gpu.type, listed)});
  }
  if (!profile.gpu.constraint.empty()) {
    std::set<std::string> features;
    for (const auto* n : nodes) features.insert(n->features.begin(), n->features.end());
    std::vector<std::string> listed(features.begin(), features.end());
    std::string constraint = profile.gpu.constraint;
    for (char& c : constraint)
      if (c == '&' || c == '|' || c == ',' || c == '[' || c == ']' || c == '(' || c == ')') c = ' ';
    for (const auto& word : split(constraint, ' ')) {
      if (word.empty()) continue;
      std::string name = word.substr(0, word.find('*'));
      bool found = features.count(name) > 0;
      rows->push_back({"feature " + name, "in gpu_request.constraint", found ? "on the nodes" : "absent: " + join(listed, ", "),
                       found ? Verdict::ok : Verdict::mismatch, !found,
                       found ? "" : "fix gpu_request.constraint" + did_you_mean(name, listed)});
    }
  }
}

void check_accounts(const SiteProfile& profile, const ClusterInfo& cluster, std::vector<CheckRow>* rows) {
  const std::vector<std::string> ask = dialect_for(cluster.scheduler).accounts_command("");
  if (ask.empty()) return;  // the scheduler keeps no accounts to compare
  if (!cluster.accounts) {
    rows->push_back({"accounts", profile.account.required ? "required" : "optional", "?", Verdict::unknown, false,
                     "accounting did not answer (" + ask.front() + "): the site's docs say which account to use"});
    return;
  }
  std::string yours = cluster.accounts->empty() ? "none" : join(*cluster.accounts, ", ");
  bool bad = profile.account.required && cluster.accounts->empty();
  rows->push_back({"accounts", profile.account.required ? "required" : "optional", "yours: " + yours,
                   bad ? Verdict::mismatch : Verdict::ok, bad, bad ? "ask the site for an account; jobs without one are refused" : ""});
}

}  // namespace

std::vector<CheckRow> check_profile(const SiteProfile& profile, const ClusterInfo& cluster) {
  std::vector<CheckRow> rows;
  if (profile.scheduler != cluster.scheduler) {
    rows.push_back({"scheduler", to_string(profile.scheduler), to_string(cluster.scheduler), Verdict::mismatch, true,
                    "this is not the profile's cluster, or its `scheduler:` is wrong"});
    return rows;
  }
  if (!cluster.version.empty()) {
    // Options newer than the site's release are refused when a job is planned, from the profile's version.
    const std::string& mine = profile.scheduler_version;
    const Verdict v = mine.empty() ? Verdict::unknown : mine == cluster.release() ? Verdict::ok : Verdict::mismatch;
    rows.push_back({"scheduler_version", mine.empty() ? "-" : mine, cluster.version, v, false,
                    v == Verdict::ok ? "" : "set `scheduler_version: \"" + cluster.release() + "\"` in the profile"});
  }
  check_queues(profile, cluster, &rows);
  check_nodes(profile, cluster, &rows);
  check_accounts(profile, cluster, &rows);
  return rows;
}

bool has_fatal(const std::vector<CheckRow>& rows) {
  return std::any_of(rows.begin(), rows.end(), [](const CheckRow& r) { return r.fatal; });
}

std::string format_check(const std::vector<CheckRow>& rows) {
  std::vector<std::vector<std::string>> table = {{"CHECK", "PROFILE", "SCHEDULER", "VERDICT", "FIX"}};
  for (const auto& r : rows)
    table.push_back({r.item, r.profile, r.cluster,
                     r.fatal ? "FAIL" : r.verdict == Verdict::mismatch ? "WARN" : to_string(r.verdict), r.fix});
  return format_table(table);
}

nlohmann::json check_to_json(const std::string& site, const std::vector<CheckRow>& rows) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& r : rows)
    list.push_back({{"item", r.item}, {"profile", r.profile}, {"scheduler", r.cluster}, {"verdict", to_string(r.verdict)},
                    {"fatal", r.fatal}, {"fix", r.fix}});
  return {{"site", site}, {"ok", !has_fatal(rows)}, {"checks", list}};
}

}  // namespace hpclaunch
