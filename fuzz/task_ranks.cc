// Fuzz target: a task's environment as `exec`, `env` and `agent` read it (runtime/ranks.cc asking the faces in
// dialect/*_in_job.cc): whatever Slurm, Open MPI, MPICH/PMI, PALS, PBS or local-srun set, and the PBS_NODEFILE it
// names. The input is NAME=VALUE lines, then a NUL byte and the node file's contents. Reading may only throw
// hpclaunch::Error; ranks that read are consistent (0 <= rank < world, 0 <= local rank < local world <= world) and a
// node list has no empty name.
#include "fuzz_check.h"
#include "schedulers/pbs/dialect.h"
#include "runtime/ranks.h"
#include "util/error.h"

using namespace hpclaunch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = fuzz_text(data, size);
  const size_t nul = text.find('\0');
  const std::string file = nul == std::string_view::npos ? std::string() : std::string(text.substr(nul + 1));
  std::string_view vars = text.substr(0, nul);
  Env env;
  while (!vars.empty()) {
    const size_t nl = vars.find('\n');
    const std::string_view line = vars.substr(0, nl);
    const size_t eq = line.find('=');
    if (eq != std::string_view::npos && eq > 0) env[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
    if (nl == std::string_view::npos) break;
    vars.remove_prefix(nl + 1);
  }
  const FileReader read = [&](const std::string&) { return file; };
  try {
    const TaskRanks r = detect_task_ranks(env, read);
    FUZZ_CHECK(r.world_size >= 1 && r.rank >= 0 && r.rank < r.world_size);
    FUZZ_CHECK(r.local_world_size >= 1 && r.local_rank >= 0 && r.local_rank < r.local_world_size);
    FUZZ_CHECK(r.local_world_size <= r.world_size);
    (void)r.source.name;
  } catch (const Error&) {
  }
  try {
    for (const auto& n : job_nodes(env, read)) FUZZ_CHECK(!n.empty());
    for (const auto& n : step_nodes(env, read)) FUZZ_CHECK(!n.empty());
  } catch (const Error&) {
  }
  for (const auto& n : parse_pbs_nodefile(file)) FUZZ_CHECK(!n.empty());
  (void)job_id(env);
  return 0;
}
