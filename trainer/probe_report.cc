#include "probe_report.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "util/strings.h"

namespace hpctrain {

namespace {

// The entries of a comma list that name something ("NoDevFiles": Slurm's word for none).
int listed_entries(const std::string& list) {
  int n = 0;
  for (const auto& item : hpclaunch::split(list, ',')) {
    auto id = hpclaunch::trim(item);
    if (!id.empty() && id != "NoDevFiles") ++n;
  }
  return n;
}

}  // namespace

int reported_gpus(const std::function<const char*(const char*)>& getenv, const std::string& node,
                  std::optional<int> cuda_count) {
  auto value = [&](const char* name) -> std::string {
    const char* v = getenv(name);
    return v ? v : "";
  };
  for (const auto& item : hpclaunch::split(value("HPCLAUNCH_PROBE_TEST_GPUS"), ',')) {
    size_t eq = item.find('=');
    long long n = 0;
    if (eq != std::string::npos && item.substr(0, eq) == node && hpclaunch::parse_int(item.substr(eq + 1), &n))
      return static_cast<int>(n);
  }
  if (long long n = 0; hpclaunch::parse_int(value("HPCLAUNCH_NODE_GPUS"), &n) && n >= 0) return static_cast<int>(n);
  if (cuda_count) return *cuda_count;
  return listed_entries(value("CUDA_VISIBLE_DEVICES"));
}

std::vector<std::size_t> probe_sizes(std::size_t min_bytes, std::size_t max_bytes) {
  std::vector<std::size_t> out;
  for (std::size_t b = std::max<std::size_t>(min_bytes, 1); b <= max_bytes; b *= 2) out.push_back(b);
  if (!out.empty() && out.back() != max_bytes && max_bytes >= min_bytes) out.push_back(max_bytes);
  return out;
}

BandwidthRow bandwidth(std::size_t bytes, double seconds, int world_size) {
  BandwidthRow r;
  r.bytes = bytes;
  r.seconds = seconds;
  if (seconds > 0) r.algbw_gbs = static_cast<double>(bytes) / seconds / 1e9;
  r.busbw_gbs = world_size > 1 ? r.algbw_gbs * 2.0 * (world_size - 1) / world_size : 0.0;
  return r;
}

std::string nccl_nvlink_problem(long long code) {
  if (code <= 0 || code >= 22502) return "";
  char buf[160];
  std::snprintf(buf, sizeof buf, "NCCL %lld.%lld.%lld is older than 2.25.2, which multi-node NVLink needs", code / 10000,
                code / 100 % 100, code % 100);
  return buf;
}

std::vector<std::string> split_problems(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find("; ", start);
    if (end == std::string::npos) end = text.size();
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 2;
  }
  return out;
}

std::vector<NodeVerdict> judge_nodes(const std::vector<RankReport>& ranks, int expected_gpus, double slow_factor,
                                     int segment) {
  std::vector<NodeVerdict> nodes;
  std::vector<std::string> domains;  // each node's, in the order of nodes
  for (const auto& r : ranks) {
    auto it = std::find_if(nodes.begin(), nodes.end(), [&](const NodeVerdict& n) { return n.node == r.node; });
    if (it == nodes.end()) {
      nodes.push_back({r.node, {}, r.gpus, 0, r.problems});
      domains.push_back(r.domain);
      it = nodes.end() - 1;
    }
    it->ranks.push_back(r.rank);
    it->gpus = std::min(it->gpus, r.gpus);
    it->probe_seconds = std::max(it->probe_seconds, r.probe_seconds);
  }
  std::vector<double> times;
  for (const auto& n : nodes) times.push_back(n.probe_seconds);
  std::sort(times.begin(), times.end());
  // The lower median: with two nodes, the faster one is the reference, so a slow one of two is still found.
  const double median = times.empty() ? 0 : times[(times.size() - 1) / 2];
  char buf[160];
  for (auto& n : nodes) {
    if (expected_gpus > 0 && n.gpus < expected_gpus) {
      std::snprintf(buf, sizeof buf, "%d GPU(s), expected %d", n.gpus, expected_gpus);
      n.problems.push_back(buf);
    }
    if (nodes.size() > 1 && median > 0 && n.probe_seconds > slow_factor * median) {
      std::snprintf(buf, sizeof buf, "%.1fx slower than the median node (%.3f s vs %.3f s; limit %.1fx)",
                    n.probe_seconds / median, n.probe_seconds, median, slow_factor);
      n.problems.push_back(buf);
    }
  }
  for (size_t i = 0; segment > 0 && i < nodes.size(); ++i) {
    const size_t first = i / segment * segment;
    if (domains[i] == domains[first] && !domains[i].empty()) continue;
    if (domains[i].empty()) {
      nodes[i].problems.push_back("in no NVLink domain, in a segment of " + std::to_string(segment) + " nodes");
    } else if (i != first) {
      nodes[i].problems.push_back("NVLink domain " + domains[i] + ", not its segment's (" +
                                  (domains[first].empty() ? std::string("none") : domains[first]) + " on " +
                                  nodes[first].node + ")");
    }
  }
  return nodes;
}

std::vector<std::string> bad_nodes(const std::vector<NodeVerdict>& nodes) {
  std::vector<std::string> out;
  for (const auto& n : nodes)
    if (!n.problems.empty()) out.push_back(n.node);
  return out;
}

std::string busbw_shortfall(const std::vector<BandwidthRow>& rows, double expected_gbs) {
  if (expected_gbs <= 0 || rows.empty()) return "";
  double best = 0;
  for (const auto& r : rows) best = std::max(best, r.busbw_gbs);
  if (best >= expected_gbs / 2) return "";
  char buf[256];
  std::snprintf(buf, sizeof buf, "busbw %.2f GB/s at best, below half the %.0f GB/s this interconnect gives", best,
                expected_gbs);
  return buf;
}

std::string format_probe(const std::vector<BandwidthRow>& rows, const std::vector<NodeVerdict>& nodes,
                         const std::string& backend, int world_size) {
  std::string out;
  char buf[256];
  std::snprintf(buf, sizeof buf, "# allreduce (%s, %d ranks): busbw = algbw * 2(n-1)/n, as nccl-tests\n",
                backend.c_str(), world_size);
  out += buf;
  std::snprintf(buf, sizeof buf, "# %12s %12s %12s %12s\n", "size(B)", "time(us)", "algbw(GB/s)", "busbw(GB/s)");
  out += buf;
  for (const auto& r : rows) {
    std::snprintf(buf, sizeof buf, "  %12zu %12.1f %12.3f %12.3f\n", r.bytes, r.seconds * 1e6, r.algbw_gbs, r.busbw_gbs);
    out += buf;
  }
  out += "# nodes\n";
  for (const auto& n : nodes) {
    std::string problems;
    for (const auto& p : n.problems) problems += (problems.empty() ? "" : "; ") + p;
    std::snprintf(buf, sizeof buf, "  %-20s ranks %-3zu gpus %-2d probe %.3f s  %s\n", n.node.c_str(), n.ranks.size(),
                  n.gpus, n.probe_seconds, problems.empty() ? "ok" : ("BAD: " + problems).c_str());
    out += buf;
  }
  return out;
}

nlohmann::json probe_json(const std::vector<BandwidthRow>& rows, const std::vector<NodeVerdict>& nodes,
                          const std::string& backend, int world_size, int expected_gpus, double slow_factor,
                          double expected_busbw_gbs) {
  nlohmann::json sizes = nlohmann::json::array(), list = nlohmann::json::array();
  for (const auto& r : rows)
    sizes.push_back({{"bytes", r.bytes}, {"seconds", r.seconds}, {"algbw_gbs", r.algbw_gbs}, {"busbw_gbs", r.busbw_gbs}});
  for (const auto& n : nodes)
    list.push_back({{"node", n.node}, {"ranks", n.ranks}, {"gpus", n.gpus}, {"probe_seconds", n.probe_seconds},
                    {"problems", n.problems}});
  return {{"backend", backend}, {"world_size", world_size}, {"expected_gpus", expected_gpus},
          {"slow_factor", slow_factor}, {"allreduce", sizes}, {"nodes", list}, {"bad_nodes", bad_nodes(nodes)},
          {"ok", bad_nodes(nodes).empty()}, {"expected_busbw_gbs", expected_busbw_gbs},
          {"busbw_shortfall", busbw_shortfall(rows, expected_busbw_gbs)}};
}

std::string probe_json_text(const std::vector<BandwidthRow>& rows, const std::vector<NodeVerdict>& nodes,
                            const std::string& backend, int world_size, int expected_gpus, double slow_factor,
                            double expected_busbw_gbs) {
  return probe_json(rows, nodes, backend, world_size, expected_gpus, slow_factor, expected_busbw_gbs).dump(2) + "\n";
}

}  // namespace hpctrain
