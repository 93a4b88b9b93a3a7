// A node's NVLink domain (a GB200/GB300 NVL72 rack, an NVL4 board) from `nvidia-smi -q`'s Fabric section: each
// GPU's fabric state and status, its ClusterUUID and CliqueId. GPUs of one domain share both; a multi-node NVLink
// job wants its ranks grouped by domain, and every GPU's fabric registered (State Completed, Status Success).
// Pure, but for machine_nvlink_fabric (runtime/machine_fabric.cc), which runs nvidia-smi.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hpclaunch {

struct GpuFabric {
  std::string gpu;           // "00000000:04:00.0", the block's bus id
  std::string state;         // "Completed", "In Progress", "Not Started", "N/A" (no NVLink fabric: H100 PCIe, ...)
  std::string status;        // "Success", or an error; "N/A"
  std::string clique_id;     // "32766"; "N/A"
  std::string cluster_uuid;  // "2a41c3f5-..."; "N/A"
  std::string bandwidth;     // Health's Bandwidth: "Full", "Degraded", "N/A"; "" when the driver has no Health
};

// Every GPU block's Fabric section, in the order nvidia-smi lists them (none for a node without GPUs, or text
// that is not nvidia-smi's).
std::vector<GpuFabric> parse_nvidia_smi_fabric(std::string_view text);

struct NodeFabric {
  // "CLUSTERUUID/CLIQUEID" when the node's GPUs are in one registered NVLink domain; "" when they have no fabric
  // (State N/A: no multi-node NVLink) or are not all in a good state.
  std::string domain;
  std::vector<std::string> problems;  // one line each: a GPU not registered, GPUs of different domains
  bool has_fabric = false;  // some GPU is in a multi-node fabric (not N/A, and not a ClusterUUID of zeros)
};
NodeFabric node_fabric(const std::vector<GpuFabric>& gpus);

// The IMEX channel a multi-node NVLink job needs (`channel`, /dev/nvidia-caps-imex-channels/channel0 by default):
// the site's prolog or Slurm's switch/nvidia_imex creates it, hpclaunch never does. Its problems, when the node is
// in a fabric: missing, or not writable by the job.
// This machine's: `nvidia-smi -q` read (an effect: runtime/machine_fabric.cc); nullopt where nvidia-smi is missing
// or fails (no NVIDIA GPU). The agent's domain (cli/cmd_agent.cc) and the preflight's (cli/cmd_check.cc).
std::optional<NodeFabric> machine_nvlink_fabric();

std::vector<std::string> imex_problems(const NodeFabric& node, const std::string& channel, bool exists, bool writable);

}  // namespace hpclaunch
