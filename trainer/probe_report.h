// The preflight probe's arithmetic and verdict (hpclaunch-probe, `hpclaunch check`): allreduce bandwidth as
// nccl-tests defines it, the nodes that report too few GPUs or run slower than the rest, the table and the JSON
// report. Pure: no Torch, no clock.
#pragma once
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace hpctrain {

// Message sizes from min_bytes to max_bytes, doubling (nccl-tests' -f 2), both ends included.
std::vector<std::size_t> probe_sizes(std::size_t min_bytes, std::size_t max_bytes);

struct BandwidthRow {
  std::size_t bytes = 0;
  double seconds = 0;     // one allreduce, averaged
  double algbw_gbs = 0;   // bytes / seconds, in GB/s (1e9)
  double busbw_gbs = 0;   // algbw * 2(n-1)/n: what each link carried, comparable across world sizes
};
BandwidthRow bandwidth(std::size_t bytes, double seconds, int world_size);

// What one rank found on its node.
struct RankReport {
  int rank = 0;
  std::string node;
  int gpus = 0;              // GPUs this rank's node shows
  double probe_seconds = 0;  // the same local workload on every rank
  std::string domain;        // the node's NVLink domain (HPCLAUNCH_NVLINK_DOMAIN, from `hpclaunch check`); "" none
  std::vector<std::string> problems;  // what `hpclaunch check` found on the node first (HPCLAUNCH_NODE_PROBLEMS)
};

// Multi-node NVLink needs NCCL 2.25.2 or later (NVIDIA's NCCL release notes; the MNNVL fixes of GB200 NVL72): the
// problem for `nccl_code` (NCCL_VERSION_CODE: 22502) on a node in an NVLink domain, "" when fine or unknown (0).
std::string nccl_nvlink_problem(long long nccl_code);
// HPCLAUNCH_NODE_PROBLEMS's text ("a; b") as a list.
std::vector<std::string> split_problems(const std::string& text);

// The GPUs a rank reports for its node, the first of: the test hook HPCLAUNCH_PROBE_TEST_GPUS's figure for `node`
// ("n2=3,n5=0"); HPCLAUNCH_NODE_GPUS, which `hpclaunch check` hands over on AMD and Intel nodes (their vendor's
// devices: torch.cuda sees no Level Zero device, and a bound rank only its own); `cuda_count`, torch's (nullopt
// when CUDA is not available); the entries of CUDA_VISIBLE_DEVICES (a CPU build: what the scheduler gave).
int reported_gpus(const std::function<const char*(const char*)>& getenv, const std::string& node,
                  std::optional<int> cuda_count);

struct NodeVerdict {
  std::string node;
  std::string domain;  // its NVLink domain, "" none
  std::vector<int> ranks;
  int gpus = 0;
  double probe_seconds = 0;  // the slowest of its ranks
  std::vector<std::string> problems;  // empty: healthy
};

// One row per node (in order of first rank). A node is bad if it shows fewer than `expected_gpus` (0: not
// checked) or its probe took more than `slow_factor` times the median node's.
// With `segment` > 0, each run of that many nodes (in order of first rank) must share one NVLink domain: a node in
// another domain than its segment's first node, or in none, is bad.
std::vector<NodeVerdict> judge_nodes(const std::vector<RankReport>& ranks, int expected_gpus, double slow_factor,
                                     int segment = 0);
std::vector<std::string> bad_nodes(const std::vector<NodeVerdict>& nodes);

// The busbw a job reached (its best size) against what its interconnect should give (`--expect-busbw`, from
// the site profile): below half of it is flagged, a job-wide problem (a fabric, a plugin, TCP instead of the
// network), not one node's. "" when fine or when nothing was expected.
std::string busbw_shortfall(const std::vector<BandwidthRow>& rows, double expected_gbs);

// Bandwidth inside and across NVLink domains (multi-node NVLink: GB200/GB300 NVL72 racks, NVL4 boards). The groups
// the probe measures at once, from every rank's domain; ranks in no domain take no part. `inside`: one per domain
// with two ranks or more, named by the domain, its ranks. `across`: "rail K", the K-th rank of each domain, where two
// domains or more have one: its traffic crosses the network between domains, as data parallelism's does. A rank is
// in at most one group of each kind, so each kind's groups run at the same time.
struct RankGroup {
  std::string name;
  std::vector<int> ranks;
};
struct DomainGroups {
  std::vector<RankGroup> inside, across;
};
DomainGroups domain_groups(const std::vector<RankReport>& ranks);

// A group's allreduce at `bytes`: the time of its slowest member (`seconds_by_rank`, indexed by world rank).
struct GroupBandwidth {
  std::string name;
  std::vector<std::string> nodes;  // in order of first rank
  std::vector<int> ranks;
  BandwidthRow row;
};
std::vector<GroupBandwidth> group_bandwidth(const std::vector<RankGroup>& groups, const std::vector<RankReport>& ranks,
                                            const std::vector<double>& seconds_by_rank, std::size_t bytes);

// What one probe found: the sweep, the nodes, the groups' bandwidth, and what the site's profile expects.
struct ProbeSummary {
  std::vector<BandwidthRow> rows;
  std::vector<NodeVerdict> nodes;
  std::string backend;
  int world_size = 0;
  int expected_gpus = 0;
  double slow_factor = 0;
  double expected_busbw_gbs = 0;         // --expect-busbw: the network's figure (the sweep, and across domains)
  double expected_nvlink_busbw_gbs = 0;  // --expect-nvlink-busbw: inside one NVLink domain
  std::vector<GroupBandwidth> inside, across;  // empty without NVLink domains
};

// A domain whose busbw is below half `expected_nvlink_busbw_gbs`, naming its nodes, and the slowest rail across
// domains below half `expected_busbw_gbs`: one line each, job-level warnings like busbw_shortfall (one allreduce
// of a group names no single node). Empty when fine or when nothing was expected.
std::vector<std::string> domain_shortfalls(const ProbeSummary& s);

// The nccl-tests-like table and the summary lines.
std::string format_probe(const ProbeSummary& s);
nlohmann::json probe_json(const ProbeSummary& s);
// probe_json as the report file holds it (indented, a newline at the end): what hpclaunch-probe writes, without
// compiling nlohmann's code itself.
std::string probe_json_text(const ProbeSummary& s);

}  // namespace hpctrain
