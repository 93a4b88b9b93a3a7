#include "survey/site_learn.h"

#include <fmt/core.h>

#include <algorithm>
#include <regex>
#include <set>

#include "scheduler/backend.h"
#include "util/error.h"
#include "util/strings.h"

namespace hpclaunch {

namespace {

bool has_gpus(const ClusterInfo& cluster, const PartitionInfo& p) {
  auto nodes = cluster.nodes_of(p);
  return !nodes.empty() && std::all_of(nodes.begin(), nodes.end(), [](const NodeInfo* n) { return n->gpus() > 0; });
}

// The smallest value over the nodes: a job planned with it fits on every one of them.
template <class F>
long smallest(const std::vector<const NodeInfo*>& nodes, F field, bool* differ) {
  std::set<long> values;
  for (const auto* n : nodes) values.insert(field(*n));
  *differ = *differ || values.size() > 1;
  return values.empty() ? 0 : *values.begin();
}

}  // namespace

SiteProfile learn_profile(const std::string& name, const ClusterInfo& cluster, const std::string& date,
                          std::vector<std::string>* notes) {
  static const std::regex k_name("[a-z0-9][a-z0-9._-]*");
  if (!std::regex_match(name, k_name))
    throw Error("sites learn", "'" + name + "' is not a valid site name", "use lower-case letters, digits, '-', '.', '_'");
  std::vector<const PartitionInfo*> chosen;
  for (const auto& p : cluster.partitions)
    if (has_gpus(cluster, p)) chosen.push_back(&p);
  bool gpus = !chosen.empty();
  if (!gpus) {
    for (const auto& p : cluster.partitions) chosen.push_back(&p);
    notes->push_back("no partition has GPU nodes (GRES gpu): the profile plans CPU-only jobs (gloo)");
  }
  if (chosen.empty())
    throw failure("sites learn", "the scheduler lists no partition", "run it on the cluster's login node");

  const SchedulerBackend& backend = backend_for(cluster.scheduler);
  const SchedulerDialect& dialect = backend.dialect();
  SiteProfile p;
  p.name = name;
  p.title = name + " (learned from its scheduler on " + date + ")";
  p.scheduler = cluster.scheduler;
  const PartitionInfo* main = chosen.front();
  for (const auto* c : chosen)
    if (c->is_default) main = c;
  for (const auto* c : chosen) {
    Queue q;
    q.name = c->name;
    q.kind = dialect.queue_kind();
    q.max_time_s = c->max_time_s;
    q.max_nodes = c->max_nodes;
    q.is_default = c == main;
    p.queues.push_back(q);
  }

  std::vector<const NodeInfo*> nodes = cluster.nodes_of(*main);
  bool differ = false;
  p.node.gpus = static_cast<int>(smallest(nodes, [](const NodeInfo& n) { return long(n.gpus()); }, &differ));
  p.node.cores = static_cast<int>(smallest(nodes, [](const NodeInfo& n) { return long(n.cores()); }, &differ));
  p.node.threads_per_core = static_cast<int>(smallest(nodes, [](const NodeInfo& n) { return long(n.threads_per_core); }, &differ));
  p.node.memory_gb = static_cast<int>(smallest(nodes, [](const NodeInfo& n) { return n.memory_mb / 1024; }, &differ));
  if (p.node.cores < 1) p.node.cores = std::max(1, p.node.gpus);
  if (!nodes.empty() && !nodes.front()->arch.empty()) p.node.arch = nodes.front()->arch;
  if (differ)
    notes->push_back("the nodes of partition " + main->name +
                     " differ: the profile takes the smallest of each (GPUs, cores, threads, memory)");

  std::set<std::string> types;
  for (const auto* n : nodes)
    for (const auto& g : n->gres)
      if (g.name == "gpu") types.insert(g.type);
  if (!gpus) {
    p.gpu.style = GpuStyle::none;
  } else {
    p.gpu.style = dialect.gpu_style();
    const bool typed = gpu_style_type(p.gpu.style) == GpuType::typed;  // a GRES names its type; PBS's select does not
    if (typed && types.size() == 1) p.gpu.type = *types.begin();
    else if (typed && types.size() > 1) notes->push_back("several GPU types in " + main->name + ": " + join({types.begin(), types.end()}, ", ") + "; the profile asks for any (set gpu_request.type to pick one)");
  }
  if (cluster.accounts && !cluster.accounts->empty())
    notes->push_back("your accounts: " + join(*cluster.accounts, ", ") + " (pass one with --account)");

  // The release, as far as major.minor: which options its jobs may ask for (--segment: Slurm 24.05).
  p.scheduler_version = cluster.release();
  // Block topology: a segment size is proposed, not set, since every job of a queue with `segment:` must be a
  // multiple of it.
  std::set<int> sizes;
  for (const auto& b : cluster.blocks) sizes.insert(b.block_size);
  if (!sizes.empty()) {
    std::vector<std::string> list;
    for (const auto& b : cluster.blocks) list.push_back(b.name + ": " + std::to_string(b.nodes.size()) + " node(s)");
    notes->push_back(fmt::format("block topology: {} block(s) ({}), planning block size {}: for jobs on whole blocks add "
                                 "`segment: {}` to a queue, or pass --segment {} (a job's nodes a multiple of it)",
                                 cluster.blocks.size(), join(list, ", "), *sizes.begin(), *sizes.begin(), *sizes.begin()));
  }
  p.launchers = dialect.learned_launchers();  // those any cluster of this scheduler has
  p.default_launcher = LaunchMode::agent;
  p.rendezvous.master_addr = MasterAddrRule::first_node;
  p.submit_check = backend.dialect().capabilities().test_only;  // nothing here was read from the site's docs
  p.learned = Learned{date, cluster.commands};
  return p;
}

}  // namespace hpclaunch
