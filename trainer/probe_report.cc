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
  for (const auto& r : ranks) {
    auto it = std::find_if(nodes.begin(), nodes.end(), [&](const NodeVerdict& n) { return n.node == r.node; });
    if (it == nodes.end()) {
      nodes.push_back({r.node, r.domain, {}, r.gpus, 0, r.problems});
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
    const std::string& domain = nodes[i].domain;
    const std::string& first_domain = nodes[first].domain;
    if (domain == first_domain && !domain.empty()) continue;
    if (domain.empty()) {
      nodes[i].problems.push_back("in no NVLink domain, in a segment of " + std::to_string(segment) + " nodes");
    } else if (i != first) {
      nodes[i].problems.push_back("NVLink domain " + domain + ", not its segment's (" +
                                  (first_domain.empty() ? std::string("none") : first_domain) + " on " +
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

DomainGroups domain_groups(const std::vector<RankReport>& ranks) {
  std::vector<RankGroup> domains;  // in order of first rank
  for (const auto& r : ranks) {
    if (r.domain.empty()) continue;
    auto it = std::find_if(domains.begin(), domains.end(), [&](const RankGroup& g) { return g.name == r.domain; });
    if (it == domains.end()) it = domains.insert(domains.end(), RankGroup{r.domain, {}});
    it->ranks.push_back(r.rank);
  }
  DomainGroups out;
  size_t widest = 0;
  for (const auto& d : domains) {
    if (d.ranks.size() > 1) out.inside.push_back(d);
    widest = std::max(widest, d.ranks.size());
  }
  for (size_t k = 0; domains.size() > 1 && k < widest; ++k) {
    RankGroup rail{"rail " + std::to_string(k), {}};
    for (const auto& d : domains)
      if (k < d.ranks.size()) rail.ranks.push_back(d.ranks[k]);
    if (rail.ranks.size() > 1) out.across.push_back(rail);
  }
  return out;
}

std::vector<GroupBandwidth> group_bandwidth(const std::vector<RankGroup>& groups, const std::vector<RankReport>& ranks,
                                            const std::vector<double>& seconds_by_rank, std::size_t bytes) {
  std::vector<GroupBandwidth> out;
  for (const auto& g : groups) {
    GroupBandwidth b{g.name, {}, g.ranks, {}};
    double slowest = 0;
    for (int r : g.ranks) {
      if (r >= 0 && static_cast<size_t>(r) < seconds_by_rank.size()) slowest = std::max(slowest, seconds_by_rank[r]);
      auto report = std::find_if(ranks.begin(), ranks.end(), [&](const RankReport& x) { return x.rank == r; });
      if (report != ranks.end() && std::find(b.nodes.begin(), b.nodes.end(), report->node) == b.nodes.end())
        b.nodes.push_back(report->node);
    }
    b.row = bandwidth(bytes, slowest, static_cast<int>(g.ranks.size()));
    out.push_back(b);
  }
  return out;
}

std::vector<std::string> domain_shortfalls(const ProbeSummary& s) {
  std::vector<std::string> out;
  char buf[512];
  if (s.expected_nvlink_busbw_gbs > 0)
    for (const auto& d : s.inside)
      if (d.row.busbw_gbs < s.expected_nvlink_busbw_gbs / 2) {
        std::snprintf(buf, sizeof buf, "NVLink domain %s (%s): busbw %.2f GB/s inside it, below half the %.0f GB/s it gives",
                      d.name.c_str(), hpclaunch::join(d.nodes, ", ").c_str(), d.row.busbw_gbs, s.expected_nvlink_busbw_gbs);
        out.push_back(buf);
      }
  if (s.expected_busbw_gbs > 0 && !s.across.empty()) {
    auto slowest = std::min_element(s.across.begin(), s.across.end(), [](const GroupBandwidth& a, const GroupBandwidth& b) {
      return a.row.busbw_gbs < b.row.busbw_gbs;
    });
    if (slowest->row.busbw_gbs < s.expected_busbw_gbs / 2) {
      std::snprintf(buf, sizeof buf, "across NVLink domains: busbw %.2f GB/s (%s, ranks %s), below half the %.0f GB/s the "
                    "network gives", slowest->row.busbw_gbs, slowest->name.c_str(),
                    hpclaunch::join([&] {
                      std::vector<std::string> r;
                      for (int x : slowest->ranks) r.push_back(std::to_string(x));
                      return r;
                    }(), ",").c_str(), s.expected_busbw_gbs);
      out.push_back(buf);
    }
  }
  return out;
}

std::string format_probe(const ProbeSummary& s) {
  std::string out;
  char buf[512];
  std::snprintf(buf, sizeof buf, "# allreduce (%s, %d ranks): busbw = algbw * 2(n-1)/n, as nccl-tests\n",
                s.backend.c_str(), s.world_size);
  out += buf;
  std::snprintf(buf, sizeof buf, "# %12s %12s %12s %12s\n", "size(B)", "time(us)", "algbw(GB/s)", "busbw(GB/s)");
  out += buf;
  for (const auto& r : s.rows) {
    std::snprintf(buf, sizeof buf, "  %12zu %12.1f %12.3f %12.3f\n", r.bytes, r.seconds * 1e6, r.algbw_gbs, r.busbw_gbs);
    out += buf;
  }
  for (const auto* kind : {&s.inside, &s.across}) {
    if (kind->empty()) continue;
    out += kind == &s.inside ? "# inside each NVLink domain (its ranks at once)\n"
                             : "# across NVLink domains (the K-th rank of each domain: rail K)\n";
    for (const auto& g : *kind) {
      std::snprintf(buf, sizeof buf, "  %-32s ranks %-3zu %12zu bytes busbw %10.3f GB/s  %s\n", g.name.c_str(),
                    g.ranks.size(), g.row.bytes, g.row.busbw_gbs, hpclaunch::join(g.nodes, ",").c_str());
      out += buf;
    }
  }
  out += "# nodes\n";
  for (const auto& n : s.nodes) {
    std::string problems;
    for (const auto& p : n.problems) problems += (problems.empty() ? "" : "; ") + p;
    std::snprintf(buf, sizeof buf, "  %-20s ranks %-3zu gpus %-2d probe %.3f s  %s\n", n.node.c_str(), n.ranks.size(),
                  n.gpus, n.probe_seconds, problems.empty() ? "ok" : ("BAD: " + problems).c_str());
    out += buf;
  }
  return out;
}

nlohmann::json probe_json(const ProbeSummary& s) {
  auto row_json = [](const BandwidthRow& r) {
    return nlohmann::json{{"bytes", r.bytes}, {"seconds", r.seconds}, {"algbw_gbs", r.algbw_gbs}, {"busbw_gbs", r.busbw_gbs}};
  };
  nlohmann::json sizes = nlohmann::json::array(), list = nlohmann::json::array();
  for (const auto& r : s.rows) sizes.push_back(row_json(r));
  for (const auto& n : s.nodes)
    list.push_back({{"node", n.node}, {"domain", n.domain}, {"ranks", n.ranks}, {"gpus", n.gpus},
                    {"probe_seconds", n.probe_seconds}, {"problems", n.problems}});
  auto groups = [&](const std::vector<GroupBandwidth>& gs) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& g : gs) {
      nlohmann::json j = row_json(g.row);
      j["name"] = g.name;
      j["nodes"] = g.nodes;
      j["ranks"] = g.ranks;
      out.push_back(j);
    }
    return out;
  };
  const std::vector<std::string> bad = bad_nodes(s.nodes);
  return {{"backend", s.backend}, {"world_size", s.world_size}, {"expected_gpus", s.expected_gpus},
          {"slow_factor", s.slow_factor}, {"allreduce", sizes}, {"nodes", list}, {"bad_nodes", bad},
          {"ok", bad.empty()}, {"expected_busbw_gbs", s.expected_busbw_gbs},
          {"busbw_shortfall", busbw_shortfall(s.rows, s.expected_busbw_gbs)},
          {"expected_nvlink_busbw_gbs", s.expected_nvlink_busbw_gbs}, {"nvlink_domains", groups(s.inside)},
          {"across_domains", groups(s.across)}, {"domain_shortfalls", domain_shortfalls(s)}};
}

std::string probe_json_text(const ProbeSummary& s) { return probe_json(s).dump(2) + "\n"; }

}  // namespace hpctrain
