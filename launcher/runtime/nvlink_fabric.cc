#include "runtime/nvlink_fabric.h"

#include <fmt/core.h>

#include "util/strings.h"

namespace hpclaunch {

std::vector<GpuFabric> parse_nvidia_smi_fabric(std::string_view text) {
  std::vector<GpuFabric> out;
  // The fields of the Fabric section are indented deeper than "Fabric" (4 spaces in a GPU block); the section ends
  // at the next line indented as deep as "Fabric" or less. Other sections have fields of the same names (State).
  size_t fabric_indent = std::string::npos;
  bool in_health = false;
  for (const std::string& raw : split(text, '\n')) {
    std::string_view line = raw;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const size_t indent = line.find_first_not_of(' ');
    if (indent == std::string_view::npos) continue;
    std::string_view body = line.substr(indent);
    if (indent == 0) {
      fabric_indent = std::string::npos;
      if (body.substr(0, 4) == "GPU ") out.push_back({std::string(trim(body.substr(4))), "", "", "", "", ""});
      continue;
    }
    if (out.empty()) continue;
    const size_t colon = body.find(':');
    const std::string key(trim(body.substr(0, colon == std::string_view::npos ? body.size() : colon)));
    const std::string value(colon == std::string_view::npos ? "" : trim(body.substr(colon + 1)));
    if (fabric_indent != std::string::npos && indent <= fabric_indent) fabric_indent = std::string::npos;
    if (fabric_indent == std::string::npos) {
      if (key == "Fabric" && value.empty()) {
        fabric_indent = indent;
        in_health = false;
      }
      continue;
    }
    GpuFabric& g = out.back();
    if (key == "Health" && value.empty()) {
      in_health = true;
    } else if (in_health) {
      if (key == "Bandwidth") g.bandwidth = value;
    } else if (key == "State") {
      g.state = value;
    } else if (key == "Status") {
      g.status = value;
    } else if (key == "CliqueId") {
      g.clique_id = value;
    } else if (key == "ClusterUUID") {
      g.cluster_uuid = value;
    }
  }
  return out;
}

NodeFabric node_fabric(const std::vector<GpuFabric>& gpus) {
  NodeFabric node;
  std::string domain;
  bool all_good = !gpus.empty();
  for (const auto& g : gpus) {
    // No fabric, or the node's own NVSwitch fabric (an HGX H100: Completed, clique 0, a ClusterUUID of zeros).
    if (g.state.empty() || g.state == "N/A" || g.cluster_uuid == "00000000-0000-0000-0000-000000000000") {
      all_good = false;
      continue;
    }
    node.has_fabric = true;
    if (g.state != "Completed" || g.status != "Success") {
      node.problems.push_back(fmt::format("GPU {}: NVLink fabric state {}, status {} (not registered with the fabric "
                                          "manager: no multi-node NVLink)", g.gpu, g.state, g.status));
      all_good = false;
      continue;
    }
    if (g.bandwidth == "Degraded")
      node.problems.push_back(fmt::format("GPU {}: NVLink fabric bandwidth degraded", g.gpu));
    const std::string its = g.cluster_uuid + "/" + g.clique_id;
    if (domain.empty()) {
      domain = its;
    } else if (its != domain) {
      node.problems.push_back(fmt::format("GPU {} is in NVLink domain {}, another GPU of this node in {}", g.gpu, its, domain));
      all_good = false;
    }
  }
  if (node.has_fabric && all_good) node.domain = domain;
  return node;
}

std::vector<std::string> imex_problems(const NodeFabric& node, const std::string& channel, bool exists, bool writable) {
  if (!node.has_fabric) return {};
  if (!exists)
    return {fmt::format("IMEX channel {} is missing (the site's prolog or Slurm's switch/nvidia_imex gives a job its "
                        "channel; multi-node NVLink needs it)", channel)};
  if (!writable) return {fmt::format("IMEX channel {} is not writable by the job", channel)};
  return {};
}

}  // namespace hpclaunch
