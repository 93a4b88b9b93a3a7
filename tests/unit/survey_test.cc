// `sites check` and `sites learn` without a scheduler: the parsers on answers recorded from the test cluster
// (tests/unit/data/scontrol-*.txt: scripts/test-cluster.sh, Slurm 22.05.8) and on PBS Pro's documented `qstat -Qf`
// and `pbsnodes -av` forms (no PBS server runs here), the check's verdicts and the learned profile.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "site/profile_yaml.h"
#include "site/registry.h"
#include "survey/site_check.h"
#include "survey/site_learn.h"
#include "util/error.h"
#include "util/file.h"

namespace survey_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

namespace {

std::string data(const char* name) {
  auto text = read_file((std::filesystem::path(HPCLAUNCH_SOURCE_DIR) / "tests/unit/data" / name).string());
  REQUIRE(text);
  return *text;
}

ClusterInfo test_cluster() {
  ClusterInfo c;
  c.partitions = parse_scontrol_partitions(data("scontrol-partitions.txt"));
  c.nodes = parse_scontrol_nodes(data("scontrol-nodes.txt"));
  c.commands = {"scontrol show partition -o", "scontrol show node -o"};
  return c;
}

const char* k_qstat_qf = R"(Queue: workq
    queue_type = Execution
    total_jobs = 0
    resources_max.walltime = 24:00:00
    enabled = True
    started = True

Queue: prod
    queue_type = Route
    route_destinations = small,large

Queue: large
    queue_type = Execution
    resources_max.walltime = 06:00:00
    resources_max.nodect = 496
)";

const char* k_pbsnodes = R"(x3001c0s7b0n0
     Mom = x3001c0s7b0n0.hsn.cm.polaris.alcf.anl.gov
     ntype = PBS
     state = free
     pcpus = 64
     resources_available.arch = linux
     resources_available.host = x3001c0s7b0n0
     resources_available.mem = 527672492kb
     resources_available.ncpus = 64
     resources_available.ngpus = 4
     resources_available.system = polaris
     resources_available.debug = True

x3001c0s7b1n0
     Mom = x3001c0s7b1n0.hsn.cm.polaris.alcf.anl.gov
     resources_available.mem = 527672492kb
     resources_available.ncpus = 64
     resources_available.ngpus = 4
)";

SiteProfile matching_profile() {
  SiteProfile p;
  p.name = "shaped";
  p.scheduler = Scheduler::slurm;
  p.node = {4, "a100", 64, 1, 240, "x86_64"};
  p.queues = {{"shaped", QueueKind::partition, 4 * 3600, 2, 0, 0, true, ""}};
  p.gpu.style = GpuStyle::gres;
  p.gpu.type = "a100";
  p.gpu.constraint = "gpu&nvme";
  return p;
}

const CheckRow* row(const std::vector<CheckRow>& rows, const std::string& item) {
  for (const auto& r : rows)
    if (r.item == item) return &r;
  return nullptr;
}

}  // namespace

TEST_SUITE_BEGIN("survey");

TEST_CASE("scontrol's partitions and nodes, as the test cluster answers") {
  ClusterInfo c = test_cluster();
  const PartitionInfo* shaped = c.find_partition("shaped");
  REQUIRE(shaped);
  CHECK(shaped->max_time_s == 4 * 3600);
  CHECK(shaped->max_nodes == 2);
  CHECK(shaped->nodes == std::vector<std::string>{"n1", "n2"});
  const PartitionInfo* debug = c.find_partition("debug");
  REQUIRE(debug);
  CHECK(debug->is_default);
  CHECK(debug->max_time_s == 0);
  CHECK(debug->max_nodes == 0);
  CHECK(c.find_partition("single")->nodes == std::vector<std::string>{"n1"});
  REQUIRE(c.nodes.size() == 2);
  const NodeInfo& n1 = c.nodes[0];
  CHECK(n1.name == "n1");
  CHECK(n1.cores() == 64);
  CHECK(n1.threads_per_core == 1);
  CHECK(n1.memory_mb == 250000);
  CHECK(n1.gpus() == 4);
  CHECK(n1.gres.at(0).type == "a100");
  CHECK(n1.features == std::vector<std::string>{"gpu", "a100", "nvme"});
  CHECK(n1.arch == "x86_64");
}

TEST_CASE("GRES forms: typed with sockets, untyped, several, none") {
  auto nodes = parse_scontrol_nodes(
      "NodeName=a CPUTot=8 Gres=gpu:h100:4(S:0-1),gpu:a100:2 OS=Linux 6.1 #1 SMP RealMemory=1024\n"
      "NodeName=b CPUTot=8 Gres=gpu:2\nNodeName=c CPUTot=8 Gres=(null)\n");
  REQUIRE(nodes.size() == 3);
  CHECK(nodes[0].gpus() == 6);
  CHECK(nodes[0].gres[0].type == "h100");
  CHECK(nodes[0].memory_mb == 1024);  // a value with spaces before it (OS=...) does not swallow the next field
  CHECK(nodes[1].gpus() == 2);
  CHECK(nodes[1].gres[0].type.empty());
  CHECK(nodes[2].gpus() == 0);
}

TEST_CASE("sacctmgr associations, and PBS's qstat -Qf and pbsnodes -av") {
  std::vector<std::string> accounts, qos;
  parse_sacctmgr_assoc("m1234_g|debug,regular\nm1234|regular,shared\n\n", &accounts, &qos);
  CHECK(accounts == std::vector<std::string>{"m1234", "m1234_g"});
  CHECK(qos == std::vector<std::string>{"debug", "regular", "shared"});
  auto queues = parse_qstat_queues(k_qstat_qf);
  REQUIRE(queues.size() == 2);  // the routing queue is not where jobs run
  CHECK(queues[0].name == "workq");
  CHECK(queues[0].max_time_s == 24 * 3600);
  CHECK(queues[1].max_nodes == 496);
  auto nodes = parse_pbsnodes(k_pbsnodes);
  REQUIRE(nodes.size() == 2);
  CHECK(nodes[0].name == "x3001c0s7b0n0");
  CHECK(nodes[0].cpus == 64);
  CHECK(nodes[0].gpus() == 4);
  CHECK(nodes[0].memory_mb == 527672492L / 1024);
  CHECK(nodes[0].features == std::vector<std::string>{"debug"});
}

TEST_CASE("survey_cluster runs scontrol, sacctmgr, sinfo --version and scontrol show topology; accounting that does not answer stays unknown") {
  std::vector<std::string> seen;
  auto run = [&](const std::vector<std::string>& argv) {
    std::string line;
    for (const auto& a : argv) line += (line.empty() ? "" : " ") + a;
    seen.push_back(line);
    if (argv[0] == "sacctmgr") return ProcessResult{1, "", "You are not running a supported accounting_storage plugin\n"};
    if (argv[0] == "sinfo") return ProcessResult{0, data("slurm-24.11/sinfo-version.txt"), ""};
    if (argv[2] == "topology") return ProcessResult{0, data("slurm-24.11/scontrol-show-topology.txt"), ""};
    return ProcessResult{0, argv[2] == "partition" ? data("scontrol-partitions.txt") : data("scontrol-nodes.txt"), ""};
  };
  ClusterInfo c = survey_cluster(Scheduler::slurm, "alice", run);
  REQUIRE(seen.size() == 5);
  CHECK(seen[0] == "scontrol show partition -o");
  CHECK(seen[1] == "scontrol show node -o");
  CHECK(seen[2] == "sinfo --version");
  CHECK(seen[3] == "scontrol show topology");
  CHECK(seen[4].find("sacctmgr -n -P") == 0);
  CHECK(c.partitions.size() == 8);
  CHECK_FALSE(c.accounts.has_value());
  CHECK(c.version == "24.11.5");
  REQUIRE(c.blocks.size() >= 1);
  CHECK(c.blocks[0].name == "b1");
  CHECK(c.blocks[0].block_size == 2);
  CHECK(c.blocks[0].nodes == std::vector<std::string>{"n1", "n2"});
  auto down = [](const std::vector<std::string>&) { return ProcessResult{1, "", "slurm_load_partitions: Unable to contact slurm controller\n"}; };
  CHECK_THROWS_WITH(survey_cluster(Scheduler::slurm, "alice", down),
                    doctest::Contains("scontrol show partition -o: failed (exit 1): slurm_load_partitions: Unable to contact"));
}

TEST_CASE("Slurm's release and block topology, as 22.05 and 24.11 answer (recorded side by side)") {
  CHECK(parse_slurm_version(data("slurm-22.05/sinfo-version.txt")) == "22.05.8");
  CHECK(parse_slurm_version(data("slurm-24.11/sinfo-version.txt")) == "24.11.5");
  CHECK(parse_slurm_version("sinfo: error: unknown\n").empty());
  CHECK(parse_scontrol_topology("").empty());  // no topology/block (22.05; a tree's switches have no BlockName)
  CHECK(parse_scontrol_topology("SwitchName=s0 Level=0 LinkSpeed=1 Nodes=n[1-4]\n").empty());
  auto blocks = parse_scontrol_topology("BlockName=b1 BlockIndex=0 Nodes=gb[001-018] BlockSize=18\n"
                                        "BlockName=b2 BlockIndex=1 Nodes=gb[019-036] BlockSize=18\n");
  REQUIRE(blocks.size() == 2);
  CHECK(blocks[1].nodes.size() == 18);
  CHECK(blocks[1].nodes.front() == "gb019");
}

TEST_CASE("squeue's exit code: 22.05's wait status (768) and 24.11's code:signal (3:0), recorded side by side") {
  auto old = parse_squeue_jobs(data("slurm-22.05/squeue-hpclaunch.txt"));
  auto now = parse_squeue_jobs(data("slurm-24.11/squeue-hpclaunch.txt"));
  REQUIRE(old.count("48001"));
  REQUIRE(now.count("46022"));
  CHECK(old["48001"].exit_code == 3);
  CHECK(now["46022"].exit_code == 3);  // read as a plain number it was lost (t0610 on 24.11)
  CHECK(old["48004"].phase == now["46025"].phase);
  CHECK(old["48004"].exit_code == now["46025"].exit_code);
  CHECK(old.size() == now.size());
  CHECK(now["46024_1"].phase == Phase::running);
}

TEST_CASE("sites learn: the release as scheduler_version, and a segment size proposed from the blocks") {
  ClusterInfo c = test_cluster();
  c.version = "24.11.5";
  c.blocks = {{"b1", {"n1", "n2"}, 2}, {"b2", {"n3", "n4"}, 2}};
  std::vector<std::string> notes;
  SiteProfile p = learn_profile("tc", c, "2026-11-29", &notes);
  CHECK(p.scheduler_version == "24.11");
  bool proposed = false;
  for (const auto& n : notes) proposed = proposed || n.find("block topology: 2 block(s) (b1: 2 node(s), b2: 2 node(s)), "
                                                             "planning block size 2: for jobs on whole blocks add `segment: 2`") == 0;
  CHECK(proposed);
  for (const auto& q : p.queues) CHECK(q.segment == 0);  // proposed, not set
  std::vector<CheckRow> rows = check_profile(p, c);
  CHECK(row(rows, "scheduler_version")->verdict == Verdict::ok);
  p.scheduler_version = "23.02";
  CHECK(row(check_profile(p, c), "scheduler_version")->verdict == Verdict::mismatch);
  CHECK(row(check_profile(p, c), "scheduler_version")->fix == "set `scheduler_version: \"24.11\"` in the profile");
}

TEST_CASE("a profile that matches its cluster passes; each wrong fact is named with its fix") {
  ClusterInfo c = test_cluster();
  std::vector<CheckRow> rows = check_profile(matching_profile(), c);
  CHECK_FALSE(has_fatal(rows));
  CHECK(row(rows, "partition shaped max_time")->verdict == Verdict::ok);
  CHECK(row(rows, "accounts")->verdict == Verdict::unknown);

  SiteProfile wrong = matching_profile();
  wrong.queues = {{"shaped", QueueKind::partition, 48 * 3600, 4, 0, 0, true, ""}, {"gpularge", QueueKind::partition, 0, 0, 0, 0, false, ""}};
  wrong.node.gpus = 8;
  wrong.node.cores = 32;
  wrong.node.memory_gb = 512;
  wrong.memory.style = MemoryStyle::whole_node;  // a job on 7 of 8 GPUs asks 7 x 64G, more than the nodes have
  wrong.gpu.type = "v100";
  wrong.gpu.constraint = "gpu&hbm80g";
  rows = check_profile(wrong, c);
  CHECK(has_fatal(rows));
  CHECK(row(rows, "partition shaped max_time")->fatal);
  CHECK(row(rows, "partition shaped max_time")->fix == "set max_time of queue shaped to 04:00:00: longer or larger jobs are refused");
  CHECK(row(rows, "partition shaped max_nodes")->fatal);
  CHECK(row(rows, "partition gpularge")->fatal);
  CHECK(row(rows, "node.gpus")->fatal);
  CHECK_FALSE(row(rows, "node.cores")->fatal);  // fewer cores than there are: wasteful, not failing
  CHECK(row(rows, "node.cores")->verdict == Verdict::mismatch);
  CHECK(row(rows, "node.memory_gb")->fatal);
  CHECK(row(rows, "gpu_request.type")->fatal);
  CHECK(row(rows, "feature hbm80g")->fatal);
  CHECK(row(rows, "feature gpu")->verdict == Verdict::ok);
  nlohmann::json j = check_to_json("wrong", rows);
  CHECK(j["ok"] == false);
  CHECK(format_check(rows).find("FAIL") != std::string::npos);

  SiteProfile pbs = matching_profile();
  pbs.scheduler = Scheduler::pbs;
  rows = check_profile(pbs, c);
  CHECK(row(rows, "scheduler")->fatal);
}

TEST_CASE("QOS and accounts are checked against the user's associations when accounting answers") {
  ClusterInfo c = test_cluster();
  c.accounts = std::vector<std::string>{"m1234_g"};
  c.qos = std::vector<std::string>{"debug", "regular"};
  SiteProfile p = matching_profile();
  p.queues.push_back({"premium", QueueKind::qos, 0, 0, 0, 0, false, ""});
  p.queues.push_back({"regular", QueueKind::qos, 0, 0, 0, 0, false, ""});
  p.account.required = true;
  auto rows = check_profile(p, c);
  CHECK(row(rows, "qos premium")->fatal);
  CHECK(row(rows, "qos regular")->verdict == Verdict::ok);
  CHECK(row(rows, "accounts")->verdict == Verdict::ok);
  c.accounts = std::vector<std::string>{};
  CHECK(row(check_profile(p, c), "accounts")->fatal);
}

TEST_CASE("a learned profile has the cluster's GPU partitions and node shape, reads back, and checks clean") {
  ClusterInfo c = test_cluster();
  std::vector<std::string> notes;
  SiteProfile p = learn_profile("testc", c, "2026-11-22", &notes);
  CHECK(p.node.gpus == 4);
  CHECK(p.node.cores == 64);
  CHECK(p.node.memory_gb == 250000 / 1024);
  CHECK(p.gpu.type == "a100");
  CHECK(p.default_queue()->name == "debug");
  CHECK(p.find_queue("single")->max_nodes == 1);
  REQUIRE(p.learned);
  CHECK(p.learned->commands.size() == 2);
  CHECK(p.submit_check);
  std::string yaml = profile_to_yaml(p);
  SiteRegistry reg;
  reg.add({ProfileSource{"learned.yaml", yaml}});
  const SiteProfile& back = reg.get("testc");
  CHECK(back.learned->date == "2026-11-22");
  CHECK(back.find_queue("shaped")->max_time_s == 4 * 3600);
  CHECK_FALSE(has_fatal(check_profile(back, c)));
  CHECK_THROWS_WITH(learn_profile("Bad Name", c, "2026-11-22", &notes), doctest::Contains("is not a valid site name"));
}

TEST_CASE("what a scheduler can do decides the accounts row and a learned profile's launchers and GPU type") {
  ClusterInfo slurm = test_cluster();
  std::vector<std::string> notes;
  SiteProfile learned = learn_profile("testc", slurm, "2026-11-22", &notes);
  CHECK(learned.launchers == std::vector<LaunchMode>{LaunchMode::agent, LaunchMode::srun, LaunchMode::mpirun});
  CHECK(learned.gpu.style == GpuStyle::gres);
  CHECK(learned.gpu.type == "a100");  // a GRES names its type
  REQUIRE(row(check_profile(learned, slurm), "accounts"));  // Slurm's dialect has an accounts query: sacctmgr
  CHECK(row(check_profile(learned, slurm), "accounts")->fix.find("(sacctmgr)") != std::string::npos);

  ClusterInfo pbs;
  pbs.scheduler = Scheduler::pbs;
  pbs.partitions = parse_qstat_queues(k_qstat_qf);
  pbs.nodes = parse_pbsnodes(k_pbsnodes);
  learned = learn_profile("polar", pbs, "2026-11-22", &notes);
  CHECK(learned.launchers == std::vector<LaunchMode>{LaunchMode::agent, LaunchMode::mpirun});  // not PALS, a site's own
  CHECK(learned.gpu.style == GpuStyle::pbs_select);
  CHECK(learned.gpu.type.empty());
  CHECK(row(check_profile(learned, pbs), "accounts") == nullptr);  // PBS's has none: no row
}

TEST_CASE("a cluster without GPU nodes is learned as CPU-only, with a note") {
  ClusterInfo c = test_cluster();
  for (auto& n : c.nodes) n.gres.clear();
  std::vector<std::string> notes;
  SiteProfile p = learn_profile("cpu", c, "2026-11-22", &notes);
  CHECK(p.node.gpus == 0);
  CHECK(p.gpu.style == GpuStyle::none);
  REQUIRE_FALSE(notes.empty());
  CHECK(notes[0].find("no partition has GPU nodes") != std::string::npos);
}

TEST_SUITE_END();

}  // namespace survey_test
