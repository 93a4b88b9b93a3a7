#include "survey/cluster_info.h"

#include <algorithm>
#include <map>
#include <regex>
#include <set>

#include "runtime/hostlist.h"
#include "util/error.h"
#include "util/strings.h"
#include "util/time_limit.h"

namespace hpclaunch {

namespace {

using Fields = std::map<std::string, std::string>;

// One `scontrol show ... -o` line: KEY=VALUE pairs separated by spaces, where a value may itself hold spaces
// (OS=Linux 6.1 #1 SMP): a word without a KEY= start continues the previous value.
Fields scontrol_fields(std::string_view line) {
  static const std::regex k_key("^([A-Za-z][A-Za-z0-9/:_.]*)=(.*)$");
  Fields f;
  std::string last;
  for (const auto& word : split(line, ' ')) {
    if (word.empty()) continue;
    std::smatch m;
    if (std::regex_match(word, m, k_key)) {
      last = m[1].str();
      f[last] = m[2].str();
    } else if (!last.empty()) {
      f[last] += " " + word;
    }
  }
  return f;
}

int to_int(const Fields& f, const std::string& key, int fallback = 0) {
  auto it = f.find(key);
  long long v = 0;
  return it != f.end() && parse_int(it->second, &v) ? static_cast<int>(v) : fallback;
}

std::string get(const Fields& f, const std::string& key) {
  auto it = f.find(key);
  return it == f.end() ? std::string() : it->second;
}

bool unlimited(const std::string& v) { return v.empty() || v == "UNLIMITED" || v == "INFINITE" || v == "NONE"; }

// "gpu:a100:4(S:0-1),gpu:v100:2" -> {gpu a100 4}, {gpu v100 2}; "(null)" -> none.
std::vector<GresInfo> parse_gres(const std::string& text) {
  std::vector<GresInfo> out;
  if (text.empty() || text == "(null)") return out;
  std::string cleaned = std::regex_replace(text, std::regex("\\([^)]*\\)"), "");
  for (const auto& item : split(cleaned, ',')) {
    std::vector<std::string> parts = split(item, ':');
    if (parts.empty() || parts[0].empty()) continue;
    GresInfo g;
    g.name = parts[0];
    long long n = 1;
    if (parts.size() >= 3) {
      g.type = parts[1];
      parse_int(parts[2], &n);
    } else if (parts.size() == 2 && !parse_int(parts[1], &n)) {
      g.type = parts[1];
      n = 1;
    }
    g.count = static_cast<int>(n);
    out.push_back(g);
  }
  return out;
}

// `key = value` blocks (pbsnodes -av, qstat -Qf): the header line of each block, then its indented fields.
std::vector<std::pair<std::string, Fields>> pbs_blocks(std::string_view out, std::string_view header_prefix) {
  std::vector<std::pair<std::string, Fields>> blocks;
  for (const auto& raw : split(out, '\n')) {
    if (raw.empty()) continue;
    bool indented = raw[0] == ' ' || raw[0] == '\t';
    std::string_view line = trim(raw);
    if (!indented) {
      std::string name(line);
      if (!header_prefix.empty()) {
        if (name.rfind(header_prefix, 0) != 0) continue;
        name = std::string(trim(std::string_view(name).substr(header_prefix.size())));
      }
      blocks.push_back({name, {}});
      continue;
    }
    size_t eq = line.find(" = ");
    if (eq == std::string_view::npos || blocks.empty()) continue;
    blocks.back().second[std::string(trim(line.substr(0, eq)))] = std::string(trim(line.substr(eq + 3)));
  }
  return blocks;
}

// PBS memory "527672492kb", "256gb", "1tb" -> MiB.
long pbs_memory_mb(const std::string& text) {
  std::smatch m;
  static const std::regex k_mem("([0-9]+)\\s*([kmgt]?)b?", std::regex::icase);
  if (!std::regex_match(text, m, k_mem)) return 0;
  long long v = 0;
  parse_int(m[1].str(), &v);
  char unit = m[2].length() ? static_cast<char>(std::tolower(m[2].str()[0])) : 'b';
  switch (unit) {
    case 'k': return static_cast<long>(v / 1024);
    case 'm': return static_cast<long>(v);
    case 'g': return static_cast<long>(v * 1024);
    case 't': return static_cast<long>(v * 1024 * 1024);
    default: return static_cast<long>(v / (1024 * 1024));
  }
}

std::vector<std::string> sorted_unique(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

}  // namespace

int NodeInfo::gpus() const {
  int n = 0;
  for (const auto& g : gres)
    if (g.name == "gpu") n += g.count;
  return n;
}

const PartitionInfo* ClusterInfo::find_partition(const std::string& name) const {
  for (const auto& p : partitions)
    if (p.name == name) return &p;
  return nullptr;
}

std::vector<const NodeInfo*> ClusterInfo::nodes_of(const PartitionInfo& partition) const {
  std::vector<const NodeInfo*> out;
  for (const auto& n : nodes)
    if (partition.nodes.empty() ||
        std::find(partition.nodes.begin(), partition.nodes.end(), n.name) != partition.nodes.end())
      out.push_back(&n);
  return out;
}

std::vector<PartitionInfo> parse_scontrol_partitions(std::string_view out) {
  std::vector<PartitionInfo> parts;
  for (const auto& line : split(out, '\n')) {
    Fields f = scontrol_fields(line);
    if (!f.count("PartitionName")) continue;
    PartitionInfo p;
    p.name = f["PartitionName"];
    p.is_default = f["Default"] == "YES";
    if (!unlimited(f["MaxTime"])) p.max_time_s = parse_time_limit(f["MaxTime"]).value_or(0);
    if (!unlimited(f["MaxNodes"])) p.max_nodes = to_int(f, "MaxNodes");
    if (!f["Nodes"].empty() && f["Nodes"] != "(null)") p.nodes = expand_hostlist(f["Nodes"], "scontrol Nodes=");
    parts.push_back(p);
  }
  return parts;
}

std::vector<NodeInfo> parse_scontrol_nodes(std::string_view out) {
  std::vector<NodeInfo> nodes;
  for (const auto& line : split(out, '\n')) {
    Fields f = scontrol_fields(line);
    if (!f.count("NodeName")) continue;
    NodeInfo n;
    n.name = f["NodeName"];
    n.arch = get(f, "Arch");
    n.cpus = to_int(f, "CPUTot");
    n.sockets = to_int(f, "Sockets", 1);
    n.cores_per_socket = to_int(f, "CoresPerSocket", n.cpus);
    n.threads_per_core = to_int(f, "ThreadsPerCore", 1);
    n.memory_mb = to_int(f, "RealMemory");
    n.gres = parse_gres(get(f, "Gres"));
    std::string features = get(f, "AvailableFeatures");
    if (!features.empty() && features != "(null)")
      for (const auto& feat : split(features, ','))
        if (!feat.empty()) n.features.push_back(feat);
    nodes.push_back(n);
  }
  return nodes;
}

void parse_sacctmgr_assoc(std::string_view out, std::vector<std::string>* accounts, std::vector<std::string>* qos) {
  for (const auto& line : split(out, '\n')) {
    std::vector<std::string> cols = split(trim(line), '|');
    if (cols.empty() || cols[0].empty()) continue;
    accounts->push_back(cols[0]);
    if (cols.size() > 1)
      for (const auto& q : split(cols[1], ','))
        if (!q.empty()) qos->push_back(q);
  }
  *accounts = sorted_unique(*accounts);
  *qos = sorted_unique(*qos);
}

std::vector<NodeInfo> parse_pbsnodes(std::string_view out) {
  std::vector<NodeInfo> nodes;
  for (auto& [name, f] : pbs_blocks(out, "")) {
    NodeInfo n;
    n.name = name;
    n.cpus = to_int(f, "resources_available.ncpus", to_int(f, "pcpus"));
    n.sockets = 1;
    n.cores_per_socket = n.cpus;  // PBS does not tell cores from hardware threads
    n.memory_mb = pbs_memory_mb(get(f, "resources_available.mem"));
    n.arch = get(f, "resources_available.arch");
    if (int g = to_int(f, "resources_available.ngpus"); g > 0) n.gres.push_back({"gpu", "", g});
    for (const auto& [key, value] : f)
      if (key.rfind("resources_available.", 0) == 0 && value == "True")
        n.features.push_back(key.substr(std::string("resources_available.").size()));
    nodes.push_back(n);
  }
  return nodes;
}

std::vector<PartitionInfo> parse_qstat_queues(std::string_view out) {
  std::vector<PartitionInfo> queues;
  for (auto& [name, f] : pbs_blocks(out, "Queue:")) {
    if (!f.count("queue_type") || f["queue_type"] != "Execution") continue;
    PartitionInfo q;
    q.name = name;
    if (f.count("resources_max.walltime")) q.max_time_s = parse_time_limit(f["resources_max.walltime"]).value_or(0);
    q.max_nodes = to_int(f, "resources_max.nodect");
    queues.push_back(q);
  }
  return queues;
}

namespace {

std::string ask(const std::vector<std::string>& argv, const CommandRunner& run, ClusterInfo* info, const char* fix) {
  ProcessResult r = run(argv);
  info->commands.push_back(join(argv, " "));
  if (r.exit_code != 0) command_failed(argv, r, fix);
  return r.out;
}

}  // namespace

ClusterInfo survey_cluster(Scheduler scheduler, const std::string& user, const CommandRunner& run) {
  ClusterInfo info;
  info.scheduler = scheduler;
  if (scheduler == Scheduler::pbs) {
    const char* fix = "run it on the site's login node, where the PBS server answers (`qstat -B`)";
    info.partitions = parse_qstat_queues(ask({"qstat", "-Qf"}, run, &info, fix));
    info.nodes = parse_pbsnodes(ask({"pbsnodes", "-av"}, run, &info, fix));
    return info;
  }
  if (scheduler != Scheduler::slurm)
    throw Error("sites check", "the local site has no scheduler to ask", "check a Slurm or PBS site on its login node");
  const char* fix = "run it on the site's login node, where slurmctld answers (`scontrol ping`)";
  info.partitions = parse_scontrol_partitions(ask({"scontrol", "show", "partition", "-o"}, run, &info, fix));
  info.nodes = parse_scontrol_nodes(ask({"scontrol", "show", "node", "-o"}, run, &info, fix));
  std::vector<std::string> assoc = {"sacctmgr", "-n", "-P", "show", "assoc", "user=" + user, "format=Account,QOS"};
  ProcessResult r = run(assoc);
  info.commands.push_back(join(assoc, " "));
  if (r.exit_code == 0) {
    std::vector<std::string> accounts, qos;
    parse_sacctmgr_assoc(r.out, &accounts, &qos);
    info.accounts = accounts;
    info.qos = qos;
  }
  return info;
}

}  // namespace hpclaunch
