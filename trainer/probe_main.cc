// hpclaunch-probe: the preflight check every rank of a job runs (`hpclaunch check`): each node reports its GPUs, the
// ranks take turns at the same small local workload (a node slower than the rest shows), then all ranks allreduce
// messages from --min-bytes to --max-bytes (gloo on CPU, NCCL on GPU) and rank 0 prints algbw and busbw as
// nccl-tests does. Rank 0 writes the JSON report (--json, or $HPCLAUNCH_JOB_DIR/preflight.json); every rank exits 1
// when a node is bad, naming it.
// Test hooks (no real fault can be put on one emulated node of this machine; documented in docs/preflight.md):
// HPCLAUNCH_PROBE_TEST_SLOW_NODE=NODE adds 0.5 s to NODE's workload, HPCLAUNCH_PROBE_TEST_GPUS=NODE=N makes NODE
// report N GPUs. An AMD or Intel node's GPUs come from `hpclaunch check` (HPCLAUNCH_NODE_GPUS; reported_gpus).
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "atomic_file.h"
#include "ddp.h"
#include "gpu_policy.h"
#include "loaded_nccl.h"
#include "options.h"
#include "probe_report.h"
#include "util/cli_error.h"
#include "util/error.h"

namespace {

using namespace hpctrain;
using Clock = std::chrono::steady_clock;

constexpr int k_name_slots = 64;
constexpr int k_domain_slots = 64;     // "CLUSTERUUID/CLIQUEID": 47 characters
constexpr int k_problem_slots = 512;   // what `hpclaunch check` found on the node, "; " between problems
constexpr int k_gpus_at = k_name_slots, k_probe_at = k_name_slots + 1, k_domain_at = k_name_slots + 2,
              k_problems_at = k_domain_at + k_domain_slots, k_row = k_problems_at + k_problem_slots;

// Text into a row's slots (one character a slot, cut at `slots`) and back.
void put_text(torch::Tensor& reports, int rank, int at, int slots, const std::string& text) {
  for (size_t i = 0; i < text.size() && i < static_cast<size_t>(slots); ++i)
    reports[rank][at + static_cast<int64_t>(i)] = static_cast<double>(static_cast<unsigned char>(text[i]));
}
std::string get_text(const torch::Tensor& reports, int rank, int at, int slots) {
  std::string out;
  for (int i = 0; i < slots; ++i)
    if (auto c = static_cast<char>(reports[rank][at + i].item<double>())) out += c;
  return out;
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

std::string node_name() {
  char host[256] = "";
  ::gethostname(host, sizeof host - 1);
  // `hpclaunch check` sets HPCLAUNCH_NODENAME from the job's face (dialect/in_job.h), which the probe cannot link.
  return env_or("HPCLAUNCH_NODENAME", host).substr(0, k_name_slots);
}

// The same small workload on every rank: the best of three runs of 30 128x128 matrix products on one thread.
double local_probe(const torch::Device& device, const std::string& node) {
  torch::NoGradGuard no_grad;
  auto a = torch::rand({128, 128}, torch::TensorOptions().device(device));
  double best = 1e9;
  for (int run = 0; run < 3; ++run) {
    auto start = Clock::now();
    auto c = a;
    for (int i = 0; i < 30; ++i) c = torch::mm(c, a).clamp(-1, 1);
    (void)c.sum().item<float>();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
  }
  if (env_or("HPCLAUNCH_PROBE_TEST_SLOW_NODE", "") == node) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    best += 0.5;
  }
  return best;
}

double time_allreduce(Communicator& comm, torch::Tensor& t, int iters) {
  comm.allreduce_sum(t);  // warm-up
  comm.barrier();
  auto start = Clock::now();
  for (int i = 0; i < iters; ++i) comm.allreduce_sum(t);
  if (t.is_cuda()) torch::cuda::synchronize(t.device().index());  // this rank's GPU, not device 0
  return std::chrono::duration<double>(Clock::now() - start).count() / iters;
}

// One allreduce of `bytes` on `comm`, averaged over enough runs for about 32 MiB in all (1 to 20): the sweep's
// sizes, and each NVLink-domain group's.
double time_allreduce_of(Communicator& comm, std::size_t bytes, const torch::Device& device) {
  auto t = torch::ones({static_cast<int64_t>(std::max<std::size_t>(bytes / 4, 1))},
                       torch::TensorOptions().dtype(torch::kFloat).device(device));
  int iters = static_cast<int>(std::clamp<std::size_t>((32u << 20) / std::max<std::size_t>(bytes, 1), 1, 20));
  return time_allreduce(comm, t, iters);
}

int run(const ProbeOptions& o) {
  at::set_num_threads(1);
  const DistEnv env = read_dist_env([](const char* name) { return std::getenv(name); });
  bool cuda = torch::cuda::is_available() && o.backend != "gloo";
  // Refused before connecting (NCCL without a GPU, gloo not built): no rank waits for a peer that cannot start.
  const std::string backend =
      choose_backend(o.backend, cuda, env.world_size, BuiltBackends{compat::k_have_gloo, compat::k_have_nccl});
  // As hpclaunch-train: more ranks on a node than visible GPUs share them round robin.
  const torch::Device device =
      backend == "nccl"
          ? torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(env.local_rank % torch::cuda::device_count()))
          : torch::Device(torch::kCPU);
  auto comm = Communicator::connect(env, backend);
  comm->set_spin_wait(std::chrono::milliseconds(5));  // as hpclaunch-train: gloo wakes a blocked waiter late here
  const int world = comm->world_size(), rank = comm->rank();
  const std::string node = node_name();

  // Each rank takes its turn at the workload, so ranks sharing cores do not slow each other down.
  double probe = 0;
  for (int turn = 0; turn < world; ++turn) {
    if (turn == rank) probe = local_probe(device, node);
    comm->barrier();
  }
  // Everyone learns everyone's report: rank r fills row r, a sum gathers them.
  // The node's NVLink domain and what `hpclaunch check` found before (fabric, IMEX channel), and the NCCL it needs.
  const std::string domain = env_or("HPCLAUNCH_NVLINK_DOMAIN", "");
  std::string problems = env_or("HPCLAUNCH_NODE_PROBLEMS", "");
  if (std::string nccl = domain.empty() ? "" : nccl_nvlink_problem(loaded_nccl_version()); !nccl.empty())
    problems += (problems.empty() ? "" : "; ") + nccl;
  auto reports = torch::zeros({world, k_row}, torch::kDouble);
  put_text(reports, rank, 0, k_name_slots, node);
  put_text(reports, rank, k_domain_at, k_domain_slots, domain);
  put_text(reports, rank, k_problems_at, k_problem_slots, problems);
  reports[rank][k_gpus_at] = reported_gpus(
      [](const char* name) { return std::getenv(name); }, node,
      torch::cuda::is_available() ? std::optional<int>(static_cast<int>(torch::cuda::device_count())) : std::nullopt);
  reports[rank][k_probe_at] = probe;
  auto gathered = reports.to(device);
  comm->allreduce_sum(gathered);
  reports = gathered.cpu();
  std::vector<RankReport> ranks;
  for (int r = 0; r < world; ++r) {
    RankReport rep;
    rep.rank = r;
    rep.node = get_text(reports, r, 0, k_name_slots);
    rep.gpus = static_cast<int>(reports[r][k_gpus_at].item<double>());
    rep.probe_seconds = reports[r][k_probe_at].item<double>();
    rep.domain = get_text(reports, r, k_domain_at, k_domain_slots);
    rep.problems = split_problems(get_text(reports, r, k_problems_at, k_problem_slots));
    ranks.push_back(rep);
  }

  std::vector<BandwidthRow> rows;
  for (std::size_t bytes : probe_sizes(o.min_bytes, o.max_bytes)) {
    rows.push_back(bandwidth(bytes, time_allreduce_of(*comm, bytes, device), world));
  }
  // Inside each NVLink domain, then across domains (rail K: the K-th rank of each): each kind's groups at once, at
  // the sweep's largest size; every rank learns every rank's time, as the reports above.
  ProbeSummary summary;
  const DomainGroups groups = domain_groups(ranks);
  const std::size_t group_bytes = o.max_bytes;
  for (const auto* kind : {&groups.inside, &groups.across}) {
    if (kind->empty()) continue;
    auto seconds = torch::zeros({world}, torch::kDouble);
    for (size_t g = 0; g < kind->size(); ++g) {
      const RankGroup& group = (*kind)[g];
      if (std::find(group.ranks.begin(), group.ranks.end(), rank) == group.ranks.end()) continue;
      auto sub = comm->subgroup((kind == &groups.inside ? "inside-" : "across-") + std::to_string(g), group.ranks);
      seconds[rank] = time_allreduce_of(*sub, group_bytes, device);
      sub->shutdown();
    }
    auto gathered_seconds = seconds.to(device);
    comm->allreduce_sum(gathered_seconds);
    seconds = gathered_seconds.cpu();
    std::vector<double> by_rank(static_cast<size_t>(world));
    for (int r = 0; r < world; ++r) by_rank[static_cast<size_t>(r)] = seconds[r].item<double>();
    (kind == &groups.inside ? summary.inside : summary.across) = group_bandwidth(*kind, ranks, by_rank, group_bytes);
  }
  summary.rows = rows;
  summary.nodes = judge_nodes(ranks, o.expect_gpus, o.slow_factor, o.segment);
  summary.backend = backend;
  summary.world_size = world;
  summary.expected_gpus = o.expect_gpus;
  summary.slow_factor = o.slow_factor;
  summary.expected_busbw_gbs = o.expect_busbw;
  summary.expected_nvlink_busbw_gbs = o.expect_nvlink_busbw;
  std::vector<std::string> bad = bad_nodes(summary.nodes);
  if (rank == 0) {
    std::fputs(format_probe(summary).c_str(), stdout);
    std::string path = o.json.empty() && std::getenv("HPCLAUNCH_JOB_DIR") ? env_or("HPCLAUNCH_JOB_DIR", "") + "/preflight.json" : o.json;
    if (!path.empty()) {
      const std::string text = probe_json_text(summary);
      write_file_atomically(path, std::vector<char>(text.begin(), text.end()),
                            {"the preflight report", "check the job directory"});
    }
    std::string shortfall = busbw_shortfall(rows, o.expect_busbw);
    if (!shortfall.empty()) std::fprintf(stderr, "hpclaunch-probe: warning: %s; check the network setup\n", shortfall.c_str());
    for (const auto& line : domain_shortfalls(summary))
      std::fprintf(stderr, "hpclaunch-probe: warning: %s; check the NVLink fabric and the network setup\n", line.c_str());
    std::fflush(stdout);
  }
  comm->barrier();  // rank 0 may hold the store: leave together
  comm->shutdown();
  if (bad.empty()) return 0;
  if (rank == 0) {
    std::string list;
    for (const auto& n : bad) list += (list.empty() ? "" : ", ") + n;
    std::fprintf(stderr, "hpclaunch-probe: bad node(s): %s; exclude them (sbatch --exclude=%s) or tell the site\n",
                 list.c_str(), list.c_str());
  }
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  return hpclaunch::run_main("hpclaunch-probe", [&] {
    using namespace hpctrain;
    const ProbeInvocation inv = parse_probe_command_line(std::vector<std::string>(argv + 1, argv + argc));
    switch (inv.command) {
      case Command::help: std::fputs(inv.help_text.c_str(), stdout); return 0;
      case Command::version:
        std::puts(version_line("hpclaunch-probe", loaded_nccl_version()).c_str());
        return 0;
      default: break;  // run the probe
    }
    return run(inv.options);
  });
}
