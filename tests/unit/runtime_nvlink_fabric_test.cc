// The NVLink fabric reader on `nvidia-smi -q` answers (tests/unit/data/nvidia-smi: one recorded, the GB200 ones
// made in its layout; see the README there).
#include <doctest/doctest.h>

#include <filesystem>

#include "runtime/nvlink_fabric.h"
#include "util/file.h"

namespace runtime_nvlink_fabric_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

namespace {
std::vector<GpuFabric> read(const std::string& name) {
  auto text = read_file((std::filesystem::path(HPCLAUNCH_SOURCE_DIR) / "tests/unit/data/nvidia-smi" / name).string());
  REQUIRE(text);
  return parse_nvidia_smi_fabric(*text);
}
}  // namespace

TEST_SUITE_BEGIN("nvlink_fabric");

TEST_CASE("a GB200 tray: four GPUs registered in one clique make the node's NVLink domain") {
  auto gpus = read("gb200-tray.txt");
  REQUIRE(gpus.size() == 4);
  CHECK(gpus[0].gpu == "00000008:01:00.0");
  CHECK(gpus[0].state == "Completed");
  CHECK(gpus[0].status == "Success");
  CHECK(gpus[0].clique_id == "4000000005");
  CHECK(gpus[0].cluster_uuid == "50000000-0000-0000-0000-000000000004");
  CHECK(gpus[0].bandwidth == "Full");
  NodeFabric node = node_fabric(gpus);
  CHECK(node.domain == "50000000-0000-0000-0000-000000000004/4000000005");
  CHECK(node.problems.empty());
  CHECK(node.has_fabric);
}

TEST_CASE("an HGX H100 (the record) has its own NVSwitch fabric, no multi-node domain; a GeForce none at all") {
  auto h100 = read("h100-hgx.txt");
  REQUIRE(h100.size() == 1);
  CHECK(h100[0].state == "Completed");  // the Fabric section's, not Inforom's or the reset status's fields
  CHECK(h100[0].clique_id == "0");
  NodeFabric node = node_fabric(h100);
  CHECK(node.domain.empty());
  CHECK_FALSE(node.has_fabric);
  CHECK(node.problems.empty());
  NodeFabric rtx = node_fabric(read("rtx-no-fabric.txt"));
  CHECK(rtx.domain.empty());
  CHECK_FALSE(rtx.has_fabric);
  CHECK(rtx.problems.empty());
  CHECK(node_fabric({}).domain.empty());
  CHECK(parse_nvidia_smi_fabric("nvidia-smi: command not found\n").empty());
}

TEST_CASE("a GPU not registered with the fabric, or GPUs of two cliques, leave no domain and say why") {
  NodeFabric bad = node_fabric(read("gb200-not-registered.txt"));
  CHECK(bad.domain.empty());
  REQUIRE(bad.problems.size() == 1);
  CHECK(bad.problems[0] == "GPU 00000008:02:00.0: NVLink fabric state In Progress, status N/A (not registered with the "
                           "fabric manager: no multi-node NVLink)");
  NodeFabric split = node_fabric(read("gb200-two-cliques.txt"));
  CHECK(split.domain.empty());
  REQUIRE(split.problems.size() == 1);
  CHECK(split.problems[0].find("GPU 00000008:03:00.0 is in NVLink domain 50000000-0000-0000-0000-000000000004/4000000006")
        == 0);
  GpuFabric degraded{"g", "Completed", "Success", "7", "u", "Degraded"};
  NodeFabric d = node_fabric({degraded});
  CHECK(d.domain == "u/7");  // still one domain, with the warning
  CHECK(d.problems == std::vector<std::string>{"GPU g: NVLink fabric bandwidth degraded"});
}

TEST_CASE("the IMEX channel: missing or not writable on a node in a fabric; not asked of a node without one") {
  NodeFabric tray = node_fabric(read("gb200-tray.txt"));
  const std::string ch = "/dev/nvidia-caps-imex-channels/channel0";
  CHECK(imex_problems(tray, ch, true, true).empty());
  CHECK(imex_problems(tray, ch, false, false) ==
        std::vector<std::string>{"IMEX channel /dev/nvidia-caps-imex-channels/channel0 is missing (the site's prolog or "
                                 "Slurm's switch/nvidia_imex gives a job its channel; multi-node NVLink needs it)"});
  CHECK(imex_problems(tray, ch, true, false) ==
        std::vector<std::string>{"IMEX channel /dev/nvidia-caps-imex-channels/channel0 is not writable by the job"});
  CHECK(imex_problems(node_fabric(read("h100-hgx.txt")), ch, false, false).empty());
}

TEST_SUITE_END();

}  // namespace runtime_nvlink_fabric_test
