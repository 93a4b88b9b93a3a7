// The preflight probe's arithmetic and verdict (trainer/probe_report.h): nccl-tests' bus bandwidth, the nodes
// with too few GPUs or a slow workload, the report.
#include <doctest/doctest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "probe_report.h"

using namespace hpctrain;

TEST_SUITE_BEGIN("probe_report");

TEST_CASE("sizes double from the smallest to the largest, both included") {
  CHECK(probe_sizes(8, 64) == std::vector<std::size_t>{8, 16, 32, 64});
  CHECK(probe_sizes(8, 100) == std::vector<std::size_t>{8, 16, 32, 64, 100});
  CHECK(probe_sizes(8, 256u << 20).size() == 26);
  CHECK(probe_sizes(64, 8).empty());
}

TEST_CASE("busbw is algbw * 2(n-1)/n, as nccl-tests defines it") {
  BandwidthRow r = bandwidth(1000000000, 0.5, 4);
  CHECK(r.algbw_gbs == doctest::Approx(2.0));
  CHECK(r.busbw_gbs == doctest::Approx(3.0));
  CHECK(bandwidth(1000, 1e-6, 2).busbw_gbs == doctest::Approx(1.0));
  CHECK(bandwidth(1000, 1e-6, 1).busbw_gbs == 0.0);  // nothing crosses a link in a world of one
  CHECK(bandwidth(1000, 0, 2).algbw_gbs == 0.0);
}

TEST_CASE("a node with too few GPUs, and a node slower than the rest, are named") {
  std::vector<RankReport> ranks = {{0, "n1", 4, 0.010}, {1, "n1", 4, 0.011}, {2, "n2", 3, 0.012},
                                   {3, "n2", 4, 0.010}, {4, "n3", 4, 0.050}, {5, "n3", 4, 0.011}};
  auto nodes = judge_nodes(ranks, 4, 2.0);
  REQUIRE(nodes.size() == 3);
  CHECK(nodes[0].problems.empty());
  CHECK(nodes[1].gpus == 3);
  REQUIRE(nodes[1].problems.size() == 1);
  CHECK(nodes[1].problems[0] == "3 GPU(s), expected 4");
  REQUIRE(nodes[2].problems.size() == 1);
  CHECK(nodes[2].problems[0].find("slower than the median node") != std::string::npos);
  CHECK(bad_nodes(nodes) == std::vector<std::string>{"n2", "n3"});
  CHECK(bad_nodes(judge_nodes(ranks, 0, 10.0)).empty());  // no GPU check, a lenient factor
}

TEST_CASE("of two nodes, the slow one is found") {
  auto nodes = judge_nodes({{0, "n1", 4, 0.01}, {1, "n2", 4, 0.51}}, 4, 2.0);
  CHECK(bad_nodes(nodes) == std::vector<std::string>{"n2"});
}

TEST_CASE("multi-node NVLink: the node's own problems, each segment in one domain, and NCCL 2.25.2 or later") {
  auto rank = [](int r, const std::string& node, const std::string& domain, std::vector<std::string> problems = {}) {
    RankReport rep{r, node, 4, 0.01};
    rep.domain = domain;
    rep.problems = std::move(problems);
    return rep;
  };
  // Four nodes in segments of 2: n1 n2 in rack A; n3 in rack B, n4 in rack A (placed outside its segment's rack);
  // n2 reported an IMEX channel missing from `hpclaunch check`.
  std::vector<RankReport> ranks = {rank(0, "n1", "A"), rank(1, "n2", "A", {"IMEX channel /dev/x is missing"}),
                                   rank(2, "n3", "B"), rank(3, "n4", "A")};
  auto nodes = judge_nodes(ranks, 4, 10.0, 2);
  CHECK(nodes[0].problems.empty());
  CHECK(nodes[1].problems == std::vector<std::string>{"IMEX channel /dev/x is missing"});
  CHECK(nodes[2].problems.empty());
  CHECK(nodes[3].problems == std::vector<std::string>{"NVLink domain A, not its segment's (B on n3)"});
  CHECK(bad_nodes(judge_nodes(ranks, 4, 10.0, 0)) == std::vector<std::string>{"n2"});  // no segment: no domain check
  auto none = judge_nodes({rank(0, "n1", ""), rank(1, "n2", "A")}, 4, 10.0, 2);
  CHECK(none[0].problems == std::vector<std::string>{"in no NVLink domain, in a segment of 2 nodes"});
  CHECK(none[1].problems == std::vector<std::string>{"NVLink domain A, not its segment's (none on n1)"});
  CHECK(nccl_nvlink_problem(22105) == "NCCL 2.21.5 is older than 2.25.2, which multi-node NVLink needs");
  CHECK(nccl_nvlink_problem(22502).empty());
  CHECK(nccl_nvlink_problem(22703).empty());
  CHECK(nccl_nvlink_problem(0).empty());
  CHECK(split_problems("a; b c; ") == std::vector<std::string>{"a", "b c"});
  CHECK(split_problems("").empty());
}

TEST_CASE("the report names the bad nodes and is JSON") {
  auto nodes = judge_nodes({{0, "n1", 4, 0.01}, {1, "n2", 2, 0.01}}, 4, 2.0);
  std::vector<BandwidthRow> rows = {bandwidth(8, 1e-5, 2), bandwidth(1 << 20, 1e-3, 2)};
  ProbeSummary s{rows, nodes, "gloo", 2, 4, 2.0};
  nlohmann::json j = probe_json(s);
  CHECK(j["ok"] == false);
  CHECK(j["bad_nodes"] == nlohmann::json::array({"n2"}));
  CHECK(j["allreduce"].size() == 2);
  CHECK(j["nvlink_domains"].empty());
  CHECK(j["domain_shortfalls"].empty());
  std::string table = format_probe(s);
  CHECK(table.find("NVLink") == std::string::npos);  // no domains: no such section
  CHECK(table.find("busbw(GB/s)") != std::string::npos);
  CHECK(table.find("BAD: 2 GPU(s), expected 4") != std::string::npos);
}

TEST_SUITE_END();

TEST_SUITE_BEGIN("probe_report");

TEST_CASE("a busbw below half the interconnect's is flagged, job-wide; nothing when nothing is expected") {
  std::vector<BandwidthRow> rows = {bandwidth(1 << 20, 1e-3, 8), bandwidth(64 << 20, 10e-3, 8)};  // best ~11.7 GB/s
  CHECK(busbw_shortfall(rows, 0).empty());
  CHECK(busbw_shortfall(rows, 20).empty());  // 11.7 >= 10
  std::string s = busbw_shortfall(rows, 40);
  CHECK(s.find("busbw 11.74 GB/s at best, below half the 40 GB/s") != std::string::npos);
  auto j = probe_json(ProbeSummary{rows, {}, "gloo", 8, 0, 2.0, 40});
  CHECK(j["expected_busbw_gbs"] == 40.0);
  CHECK(j["busbw_shortfall"].get<std::string>() == s);
  CHECK(j["ok"] == true);  // no node is to blame: the job goes on, flagged
}

TEST_CASE("NVLink domains: a group inside each domain, rails across them; ranks without a domain take no part") {
  // Two NVL72-like domains A (n1, n2) and B (n3, n4), two ranks a node; n5 has no fabric.
  std::vector<RankReport> ranks;
  const std::vector<std::pair<std::string, std::string>> layout = {{"n1", "A"}, {"n2", "A"}, {"n3", "B"}, {"n4", "B"}, {"n5", ""}};
  for (int r = 0; r < 10; ++r) ranks.push_back({r, layout[r / 2].first, 4, 0.01, layout[r / 2].second, {}});
  DomainGroups g = domain_groups(ranks);
  REQUIRE(g.inside.size() == 2);
  CHECK(g.inside[0].name == "A");
  CHECK(g.inside[0].ranks == std::vector<int>{0, 1, 2, 3});
  CHECK(g.inside[1].ranks == std::vector<int>{4, 5, 6, 7});
  REQUIRE(g.across.size() == 4);
  CHECK(g.across[0].name == "rail 0");
  CHECK(g.across[0].ranks == std::vector<int>{0, 4});
  CHECK(g.across[3].ranks == std::vector<int>{3, 7});
  // Unequal domains: the rail exists where two domains have a K-th rank; a lone rank in a domain measures nothing inside.
  ranks[6].domain = ranks[7].domain = "C";
  g = domain_groups(ranks);
  CHECK(g.inside.size() == 3);  // A (4 ranks), B (2), C (2)
  REQUIRE(g.across.size() == 2);  // rails 0 and 1 over A, B and C; A's third and fourth ranks have no peer
  CHECK(g.across[0].ranks == std::vector<int>{0, 4, 6});
  // One domain: nothing across; no domain at all: nothing.
  for (auto& r : ranks) r.domain = r.node == "n5" ? "" : "A";
  g = domain_groups(ranks);
  CHECK(g.inside.size() == 1);
  CHECK(g.across.empty());
  for (auto& r : ranks) r.domain.clear();
  g = domain_groups(ranks);
  CHECK(g.inside.empty());
  CHECK(g.across.empty());
}

TEST_CASE("a group's busbw is its slowest member's; a domain or rail below half the profile's figure is flagged") {
  std::vector<RankReport> ranks;
  for (int r = 0; r < 4; ++r) ranks.push_back({r, "n" + std::to_string(r / 2 + 1), 2, 0.01, r < 2 ? "A" : "B", {}});
  DomainGroups g = domain_groups(ranks);
  // 64 MiB in 1 ms inside A (rank 1 slowest), 10 ms inside B; across, rail 1 is slower.
  const std::size_t bytes = 64u << 20;
  std::vector<GroupBandwidth> inside = group_bandwidth(g.inside, ranks, {0.5e-3, 1e-3, 10e-3, 9e-3}, bytes);
  REQUIRE(inside.size() == 2);
  CHECK(inside[0].nodes == std::vector<std::string>{"n1"});
  CHECK(inside[0].row.seconds == doctest::Approx(1e-3));
  CHECK(inside[0].row.busbw_gbs == doctest::Approx(bandwidth(bytes, 1e-3, 2).busbw_gbs));
  CHECK(inside[1].row.seconds == doctest::Approx(10e-3));
  std::vector<GroupBandwidth> across = group_bandwidth(g.across, ranks, {2e-3, 8e-3, 2e-3, 4e-3}, bytes);
  REQUIRE(across.size() == 2);
  CHECK(across[0].nodes == std::vector<std::string>{"n1", "n2"});
  CHECK(across[1].row.seconds == doctest::Approx(8e-3));
  ProbeSummary s;
  s.inside = inside;
  s.across = across;
  CHECK(domain_shortfalls(s).empty());  // nothing expected
  s.expected_nvlink_busbw_gbs = 20;     // A reaches ~67 GB/s, B ~6.7
  s.expected_busbw_gbs = 10;            // rail 0 ~33.6, rail 1 ~8.4: the slowest, 8.4 >= 5
  std::vector<std::string> lines = domain_shortfalls(s);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == "NVLink domain B (n2): busbw 6.71 GB/s inside it, below half the 20 GB/s it gives");
  s.expected_busbw_gbs = 40;
  lines = domain_shortfalls(s);
  REQUIRE(lines.size() == 2);
  CHECK(lines[1] == "across NVLink domains: busbw 8.39 GB/s (rail 1, ranks 1,3), below half the 40 GB/s the network gives");
  nlohmann::json j = probe_json(s);
  CHECK(j["nvlink_domains"][1]["name"] == "B");
  CHECK(j["nvlink_domains"][1]["nodes"] == nlohmann::json::array({"n2"}));
  CHECK(j["across_domains"][1]["ranks"] == nlohmann::json::array({1, 3}));
  CHECK(j["expected_nvlink_busbw_gbs"] == 20.0);
  CHECK(j["domain_shortfalls"].size() == 2);
  CHECK(j["ok"] == true);  // warnings, not bad nodes
  const std::string table = format_probe(s);
  CHECK(table.find("# inside each NVLink domain") != std::string::npos);
  CHECK(table.find("rail 1") != std::string::npos);
}

TEST_SUITE_END();

TEST_SUITE_BEGIN("probe_report");

TEST_CASE("a rank's GPUs: the test hook, the count `hpclaunch check` hands over, torch's CUDA count, the CPU build's list") {
  std::map<std::string, std::string> env;
  auto getenv = [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  CHECK(reported_gpus(getenv, "n1", std::nullopt) == 0);
  env["CUDA_VISIBLE_DEVICES"] = "0,1,NoDevFiles,";
  CHECK(reported_gpus(getenv, "n1", std::nullopt) == 2);
  CHECK(reported_gpus(getenv, "n1", 4) == 4);
  // An Intel or AMD node: its vendor's devices, whatever torch.cuda says (none under Level Zero).
  env["HPCLAUNCH_NODE_GPUS"] = "12";
  CHECK(reported_gpus(getenv, "n1", 0) == 12);
  CHECK(reported_gpus(getenv, "n1", std::nullopt) == 12);
  env["HPCLAUNCH_PROBE_TEST_GPUS"] = "n2=3,n1=5";
  CHECK(reported_gpus(getenv, "n1", 4) == 5);
  CHECK(reported_gpus(getenv, "n3", 4) == 12);
}

TEST_SUITE_END();
