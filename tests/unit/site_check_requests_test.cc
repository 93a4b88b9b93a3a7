// `sites check`: FAIL means a job the profile renders would be refused or misplaced, judged from what its
// scripts ask of a node (GPUs, CPUs, memory); any other difference is a warning with its fix. The cluster is the
// test cluster's recorded answer (tests/unit/data: RealMemory=250000, 64 CPUs, 4 a100) and a PBS one.
#include <doctest/doctest.h>

#include <filesystem>

#include "site/registry.h"
#include "survey/site_check.h"
#include "util/file.h"

namespace site_check_requests_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

namespace {

ClusterInfo slurm_cluster() {
  auto read = [](const char* name) {
    auto text = read_file((std::filesystem::path(HPCLAUNCH_SOURCE_DIR) / "tests/unit/data" / name).string());
    REQUIRE(text);
    return *text;
  };
  ClusterInfo c;
  c.partitions = parse_scontrol_partitions(read("scontrol-partitions.txt"));
  c.nodes = parse_scontrol_nodes(read("scontrol-nodes.txt"));
  return c;
}

// Perlmutter's facts on the test cluster's partition: 4 GPUs, 64 cores, 256 GB (the nodes report 244 GB).
SiteProfile perlmutter_shaped() {
  SiteProfile p;
  p.name = "pm";
  p.scheduler = Scheduler::slurm;
  p.node = {4, "a100", 64, 1, 256, "x86_64"};
  p.queues = {{"shaped", QueueKind::partition, 4 * 3600, 2, 0, 0, true, ""}};
  p.gpu.style = GpuStyle::gres;
  p.gpu.type = "a100";
  p.memory.style = MemoryStyle::whole_node;
  return p;
}

const CheckRow& row(const std::vector<CheckRow>& rows, const std::string& item) {
  for (const auto& r : rows)
    if (r.item == item) return r;
  FAIL("no row " << item);
  return rows.front();
}

}  // namespace

TEST_SUITE_BEGIN("survey");

TEST_CASE("node.memory_gb above RealMemory is a warning when every rendered job fits (--mem=0, a GPU share)") {
  std::vector<CheckRow> rows = check_profile(perlmutter_shaped(), slurm_cluster());
  const CheckRow& mem = row(rows, "node.memory_gb");
  CHECK_FALSE(mem.fatal);  // the full-node job asks --mem=0; 3 of 4 GPUs ask 3 x 64G = 192G < 244G
  CHECK(mem.verdict == Verdict::mismatch);
  CHECK(mem.fix == "set node.memory_gb to at most 244 (the scheduler's RealMemory); the jobs ask --mem=0, "
                   "--mem-per-gpu=64G, which fits");
  CHECK_FALSE(has_fatal(rows));
  CHECK(format_check(rows).find("WARN") != std::string::npos);
  CHECK(format_check(rows).find("FAIL") == std::string::npos);
}

TEST_CASE("a memory request the nodes cannot give is a FAIL, named with the directive that asks it") {
  SiteProfile p = perlmutter_shaped();
  p.memory = {MemoryStyle::per_gpu, "80G"};  // 4 x 80G = 320G a node
  std::vector<CheckRow> rows = check_profile(p, slurm_cluster());
  CHECK(row(rows, "node.memory_gb").fatal);
  CHECK(row(rows, "node.memory_gb").fix.find("jobs ask --mem-per-gpu=80G with 4 GPU(s) (327680 MB a node)") == 0);

  SiteProfile whole = perlmutter_shaped();
  whole.node.memory_gb = 512;  // a 3-GPU job asks 3 x 128G
  CHECK(row(check_profile(whole, slurm_cluster()), "node.memory_gb").fatal);
}

TEST_CASE("cores: a FAIL only when the rendered CPUs per node exceed the nodes'; a per-GPU cap keeps it a warning") {
  SiteProfile p = perlmutter_shaped();
  p.node.cores = 96;  // the nodes have 64
  CHECK(row(check_profile(p, slurm_cluster()), "node.cores").fatal);  // jobs ask 96 CPUs
  p.gpu.max_cpus_per_gpu = 16;                                         // jobs ask 4 x 16 = 64
  const std::vector<CheckRow> capped = check_profile(p, slurm_cluster());
  const CheckRow& cores = row(capped, "node.cores");
  CHECK_FALSE(cores.fatal);
  CHECK(cores.fix == "set node.cores to 64 (no job this profile renders asks more than 64 CPUs, so none is refused)");
  p.node.gpus = 8;  // more GPUs than the nodes have: every full-node job is refused
  CHECK(row(check_profile(p, slurm_cluster()), "node.gpus").fatal);
}

TEST_CASE("PBS: Gadi's totals ask a GPU share of the node's memory: a FAIL only when the nodes have less") {
  ClusterInfo c;
  c.scheduler = Scheduler::pbs;
  c.partitions = parse_qstat_queues("Queue: gpuvolta\n    queue_type = Execution\n    resources_max.walltime = 48:00:00\n");
  c.nodes = parse_pbsnodes("gadi-gpu-v100-0001\n     resources_available.mem = 420000000kb\n"
                           "     resources_available.ncpus = 48\n     resources_available.ngpus = 4\n");  // 400 GB
  SiteProfile gadi = builtin_sites().get("gadi");
  CHECK_FALSE(has_fatal(check_profile(gadi, c)));  // a full node asks 380 GB of 400
  gadi.node.memory_gb = 512;                       // a full node would ask mem=512GB
  CHECK(row(check_profile(gadi, c), "node.memory_gb").fatal);
}

TEST_SUITE_END();

}  // namespace site_check_requests_test
