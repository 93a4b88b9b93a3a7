// The environment and command line of one worker: exactly the variables torchrun gives (RANK, LOCAL_RANK,
// WORLD_SIZE, ..., TORCHELASTIC_*), on top of the agent's own environment. Pure.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "agent/rendezvous_state.h"
#include "util/environment.h"

namespace hpclaunch {

using EnvMap = Env;  // util/environment.h

struct WorkerLayout {
  std::string run_id;
  std::string role = "default";
  int local_world_size = 1;
  int max_restarts = 0;
  int omp_threads = 1;  // OMP_NUM_THREADS when the agent's environment has none
  bool virtual_local_rank = false;  // LOCAL_RANK=0 and CUDA_VISIBLE_DEVICES = this worker's GPU only
  bool use_libuv = true;  // false: USE_LIBUV=0 when the agent's environment has no USE_LIBUV
  std::vector<int> signals;  // passed on to the workers by the agent: TORCHELASTIC_SIGNALS_TO_HANDLE, "SIGTERM,..."
  // With a hang watch: NCCL's flight recorder on (unless the user set it), dumping to files that start with this
  // (TORCH_FR_DUMP_TEMP_FILE, the rank appended by torch) when a collective times out. "": left as it is.
  std::string flight_recorder_prefix;
};

// The variables of the worker with `local_rank` in the round `a`, over `base` (the agent's environment). With
// virtual_local_rank (torchrun's --virtual-local-rank), CUDA_VISIBLE_DEVICES is entry `local_rank` of the agent's
// list (or `local_rank` itself when it has none) and LOCAL_RANK is 0; throws Error when the list is too short.
EnvMap worker_env(const EnvMap& base, const WorkerLayout& layout, const Assignment& a, int local_rank,
                  const std::string& error_file);
// HPCLAUNCH_PROGRESS_FILE: where the worker's progress goes (hpclaunch.progress.step, hpclaunch-train), read by the
// agent's hang watch (agent/progress_watch.h).
inline constexpr const char* k_progress_file_var = "HPCLAUNCH_PROGRESS_FILE";

struct WorkerCommand {
  std::vector<std::string> args;  // what the user gave after --
  bool no_python = false;
  bool module = false;            // -m MODULE: args[0] is the module
  bool always_python = false;     // torchrun's face: python runs the command whatever its name
  std::string python = "python3";
};

// The argv to start: `python -u SCRIPT ...` for *.py (for any script with always_python), `python -u -m MODULE
// ...` for -m, else the command itself.
std::vector<std::string> worker_argv(const WorkerCommand& c);

// OMP_NUM_THREADS when unset: the cores the agent may use, shared among its workers, at least 1.
int omp_threads_per_worker(int cores, int local_world_size);

}  // namespace hpclaunch
