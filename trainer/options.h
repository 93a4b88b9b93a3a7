// What hpclaunch-train was asked to do: command-line flags and the distributed environment (RANK, LOCAL_RANK,
// WORLD_SIZE, MASTER_ADDR, MASTER_PORT). Parsing only; nothing here touches Torch, files or sockets.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "util/error.h"  // k_exit_requeue, which the launcher and the local runner act on

namespace hpctrain {

// Exit codes (documented in docs/trainer.md): 0, the launcher's 1 and 2 (hpclaunch::k_exit_failure and
// k_exit_bad_input, util/error.h), and the trainer's own below.
inline constexpr int k_exit_ok = 0;
// The loss went non-finite (NaN or infinite) on some rank: stopped without saving (--on-nonfinite stop), or
// after --max-skipped-steps skipped steps in a row (skip-step). Not worth a requeue: the same run would diverge.
inline constexpr int k_exit_nonfinite = 3;
// Stopped by SIGUSR1/SIGTERM after finishing the step and saving: the batch script should requeue (the launcher's
// own code for "saved; requeue me", defined once in util/error.h).
using hpclaunch::k_exit_requeue;

// Test hooks, read from the environment once by main() (read_test_hooks) and handed to the run in
// TrainOptions::hooks: nothing in the training loop reads the environment.
// Test hook HPCLAUNCH_TRAIN_NONFINITE=RANK:STEP[:COUNT]: rank RANK's loss is made NaN in steps STEP to
// STEP+COUNT-1 (COUNT 1 by default; steps count from 1), so tests can diverge one rank on purpose.
struct NonfiniteHook {
  int rank = -1;  // -1: off
  int64_t first_step = 0;
  int64_t count = 0;
  bool applies(int r, int64_t step) const { return r == rank && step >= first_step && step < first_step + count; }
};
// Parses the hook's value (null or empty: off); a malformed one throws hpclaunch::Error naming the variable.
NonfiniteHook parse_nonfinite_hook(const char* value);

struct TestHooks {
  NonfiniteHook nonfinite;    // HPCLAUNCH_TRAIN_NONFINITE
  int64_t step_sleep_ms = 0;  // HPCLAUNCH_TRAIN_STEP_SLEEP_MS: sleep after every step (paces tests, t0240)
  // HPCLAUNCH_TRAIN_STALE_BATCH=STEP: the loader hands step STEP (counted from 1) the samples of the step before,
  // a stale batch that still trains, so tests can see --check-batches catch it (0: off).
  int64_t stale_batch_step = 0;
  // HPCLAUNCH_TRAIN_RESIDENT_BATCH=1, a bench hook: every step takes the run's first batch again, already on the
  // device, so the input path costs nothing (the trainer's own ceiling, as bench/trainer/ddp_train.py's
  // --loader resident is Python's; bench/trainer/gpu.sh's "resident" runs).
  bool resident_batch = false;
};
// Reads HPCLAUNCH_TRAIN_NONFINITE, HPCLAUNCH_TRAIN_STEP_SLEEP_MS, HPCLAUNCH_TRAIN_STALE_BATCH and
// HPCLAUNCH_TRAIN_RESIDENT_BATCH through `getenv`; a malformed value throws hpclaunch::Error naming the variable.
TestHooks read_test_hooks(const std::function<const char*(const char*)>& getenv);

struct TrainOptions {
  std::string model = "autoencoder";  // autoencoder | resnet | unet3d
  int resnet_depth = 50;              // 10 | 18 | 34 | 50 | 101 | 152
  int resnet_width = 64;              // channels of the first stage (64 in torchvision)
  int image_size = 224;               // synthetic resnet images are image_size^2, 3 channels
  int num_classes = 1000;             // synthetic resnet classes
  int unet_width = 64;                // channels of the first U-Net level
  int crop = 64;                      // unet3d crops are crop^3

  bool synthetic = false;
  int64_t synthetic_samples = 0;  // 0: the model's default
  std::string data_dir = "/usr/share/datasets/fashion-mnist";

  int64_t epochs = 1;
  int64_t max_steps = 0;        // stop after this many optimizer steps in total (0: no limit)
  int64_t schedule_steps = 0;   // cosine length (0: epochs * steps per epoch)
  int64_t global_batch = 0;
  int64_t batch_size = 0;       // per rank; 0: the model's default
  int64_t base_batch = 0;
  std::string lr_scaling = "none";
  std::string lr_decay = "cosine";
  double lr = 0.0;              // 0: the model's default
  double min_lr = 0.0;
  int64_t warmup_steps = 0;
  std::string optimizer = "adam";  // adam | sgd
  double momentum = 0.9;
  double weight_decay = 0.0;

  std::string backend = "auto";  // auto | gloo | nccl
  std::string device = "auto";   // auto | cpu | cuda
  int threads = 0;               // 0: leave Torch's default
  double bucket_cap_mb = 25.0;
  int64_t spin_wait_us = 5000;  // poll a collective for this long before blocking (0: block at once)
  bool broadcast_buffers = true;
  bool amp = false;
  bool channels_last = false;
  bool cuda_graphs = false;              // capture the whole step once, replay it (CUDA only)
  bool check_batches = false;            // compare each batch on the device with the sampler's (loop.cc)
  std::string optimizer_impl = "auto";   // auto | loop | foreach (gpu_policy.h)
  std::string on_nonfinite = "stop";  // stop | skip-step
  int64_t max_skipped_steps = 10;     // skip-step: stop after this many skipped steps in a row

  std::string checkpoint_dir;
  int64_t checkpoint_every = 0;  // also save every N steps (0: only per epoch, at the end and on demand)
  bool resume = false;           // resume from checkpoint_dir/latest.pt when it exists
  std::string resume_from;       // resume from this file (must exist)
  std::string metrics_file;
  int64_t log_every = 50;
  int64_t val_batches = 0;  // per rank per validation (0: the whole validation set)
  bool validate = true;
  uint64_t seed = 0;
  bool shuffle = true;
  bool explicit_batch = false;  // --global-batch-size or --batch-size given
  TestHooks hooks;              // from the environment, not from flags (main.cc)
};

struct DistEnv {
  int rank = 0;
  int local_rank = 0;
  int world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  bool agent_store = false;      // TORCHELASTIC_USE_AGENT_STORE=True: the launcher's agent hosts the store
  std::string restart_count = "0";
};

enum class Command { train, inspect, compare, help, version };

struct Invocation {
  Command command = Command::train;
  TrainOptions options;
  std::vector<std::string> files;  // inspect: 1, compare: 2
  double tolerance = 1e-5;         // compare: max |a - b| allowed per element
  std::string help_text;
};

// Parses argv (without argv[0]). Throws hpclaunch::Error naming the flag on bad input.
Invocation parse_command_line(const std::vector<std::string>& args);

// hpclaunch-probe's flags (probe_main.cc, docs/preflight.md).
struct ProbeOptions {
  std::size_t min_bytes = 8;
  std::size_t max_bytes = 256u << 20;
  int expect_gpus = 0;
  double slow_factor = 2.0;
  double expect_busbw = 0;
  double expect_nvlink_busbw = 0;  // inside one NVLink domain (the profile's interconnect.nvlink_busbw_gbs)
  int segment = 0;  // nodes per NVLink segment: each run of this many nodes (in node order) must share a domain
  std::string json;
  std::string backend = "auto";
};

struct ProbeInvocation {
  Command command = Command::train;  // train: run the probe; help or version
  ProbeOptions options;
  std::string help_text;
};

// Parses hpclaunch-probe's argv (without argv[0]); HPCLAUNCH_CHECK_MAX_BYTES and HPCLAUNCH_CHECK_SLOW_FACTOR stand
// for --max-bytes and --slow-factor (a job's --env shortens `submit --preflight`). Throws hpclaunch::Error naming
// the flag on bad input. Here, not in probe_main.cc, so that CLI11's code is compiled once for both programs.
ProbeInvocation parse_probe_command_line(const std::vector<std::string>& args);

// `--version` of hpclaunch-train and hpclaunch-probe: the version and what they were built against (the LibTorch;
// with a CUDA LibTorch the CUDA toolkit and NCCL's header), and the NCCL loaded at run time where one is
// (`loaded_nccl`: ncclGetVersion's code, 0 for none), which may differ from the header:
// "hpclaunch-train 0.1.0 (LibTorch 2.11.0, CUDA 13.0, NCCL 2.28.3 header, 2.28.9 loaded)".
std::string version_line(const std::string& program, int64_t loaded_nccl);

// Reads the distributed variables through `getenv` (injectable for tests). Missing ones mean a world of one;
// a partial or inconsistent set throws hpclaunch::Error naming the variable.
DistEnv read_dist_env(const std::function<const char*(const char*)>& getenv);

// The per-model defaults (batch size, learning rate, synthetic sample count) filled in where 0.
void apply_model_defaults(TrainOptions* options);

// Threads per rank for Torch's intra-op pool and the BLAS: --threads, else OMP_NUM_THREADS, else the CPUs this
// process may use shared among LOCAL_WORLD_SIZE ranks (1 when unset); at least 1. Values through `getenv`.
int threads_per_rank(int flag, int available_cpus, const std::function<const char*(const char*)>& getenv);

}  // namespace hpctrain
