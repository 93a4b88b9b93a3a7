// `hpclaunch check [ARGS]`: the preflight, run as a job's command on every rank (`submit ... -- hpclaunch check`):
// execs hpclaunch-probe (built with the trainer against LibTorch) from beside this binary. The probe links no
// scheduler's face (only hpclaunch_util and hpclaunch_metrics), so the node's name as the job's face gives it
// (SLURMD_NODENAME: several emulated nodes share one host) is handed over as HPCLAUNCH_NODENAME, and on an AMD or
// Intel node the GPUs its vendor's devices and variables give (torch.cuda sees no Level Zero device, and a bound
// rank only its own) as HPCLAUNCH_NODE_GPUS.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "cli/commands.h"
#include "dialect/in_job.h"
#include "runtime/node_devices.h"
#include "runtime/nvlink_fabric.h"
#include "util/strings.h"
#include "util/error.h"
#include "util/command.h"

namespace hpclaunch {

namespace {

namespace fs = std::filesystem;

// $HPCLAUNCH_PROBE, else hpclaunch-probe beside this binary (an install's bin/), else in the build tree's trainer/.
std::string find_probe() {
  if (const char* p = std::getenv("HPCLAUNCH_PROBE"); p && *p) return p;
  fs::path self = fs::path(self_executable()).parent_path();
  std::error_code ec;
  for (const fs::path& c : {self / "hpclaunch-probe", self.parent_path() / "trainer" / "hpclaunch-probe"})
    if (fs::exists(c, ec)) return c.string();
  throw failure("hpclaunch check", "hpclaunch-probe is not beside " + self.string(),
                "build hpclaunch with LibTorch (the trainer), install both, or set HPCLAUNCH_PROBE");
}

}  // namespace

int cmd_check(const Args& args) {
  std::string probe = find_probe();
  Env env = capture_environment();
  if (const InJobFace* face = job_face(env); face && !env_has(env, "HPCLAUNCH_NODENAME"))
    if (std::string node = face->node_name(env); !node.empty()) ::setenv("HPCLAUNCH_NODENAME", node.c_str(), 1);
  const Accelerator vendor = accelerator_from_env(env);
  if (!env_has(env, "HPCLAUNCH_NODE_GPUS"))
    if (auto gpus = preflight_gpu_count(vendor, node_devices(vendor, machine_sysfs()), env))
      ::setenv("HPCLAUNCH_NODE_GPUS", std::to_string(*gpus).c_str(), 1);
  // Multi-node NVLink (GB200/GB300): each GPU registered with the fabric, one clique, the IMEX channel there and
  // writable; the problems are the probe's to report (HPCLAUNCH_NODE_PROBLEMS), with the node's domain, which it
  // checks against the segment's and for an NCCL new enough.
  if (!env_has(env, "HPCLAUNCH_NODE_PROBLEMS"))
    if (auto fabric = machine_nvlink_fabric()) {
      const std::string channel =
          env_get(env, "HPCLAUNCH_IMEX_CHANNEL").value_or("/dev/nvidia-caps-imex-channels/channel0");
      std::vector<std::string> problems = fabric->problems;
      for (auto& p : imex_problems(*fabric, channel, ::access(channel.c_str(), F_OK) == 0, ::access(channel.c_str(), W_OK) == 0))
        problems.push_back(std::move(p));
      ::setenv("HPCLAUNCH_NODE_PROBLEMS", join(problems, "; ").c_str(), 1);
      if (!env_has(env, "HPCLAUNCH_NVLINK_DOMAIN")) ::setenv("HPCLAUNCH_NVLINK_DOMAIN", fabric->domain.c_str(), 1);
    }
  std::vector<char*> argv;
  argv.push_back(probe.data());
  std::vector<std::string> copy(args.begin(), args.end());
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::execv(probe.c_str(), argv.data());
  throw failure(probe, std::string("cannot run: ") + std::strerror(errno), "check that it is executable");
}

}  // namespace hpclaunch
