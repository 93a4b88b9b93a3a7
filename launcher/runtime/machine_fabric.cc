// The machine's side of runtime/nvlink_fabric.h: `nvidia-smi -q`, run.
#include "runtime/nvlink_fabric.h"
#include "util/command.h"

namespace hpclaunch {

std::optional<NodeFabric> machine_nvlink_fabric() {
  ProcessResult q = run_capture({"nvidia-smi", "-q"});
  if (q.exit_code != 0) return std::nullopt;
  return node_fabric(parse_nvidia_smi_fabric(q.out));
}

}  // namespace hpclaunch
