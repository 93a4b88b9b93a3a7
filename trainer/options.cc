// Command line and distributed environment of hpclaunch-train: see options.h.
#include "options.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdlib>
#include <limits>

#include "gpu_policy.h"
#include "util/cli_error.h"
#include "util/error.h"

namespace hpctrain {
namespace {

using hpclaunch::Error;

void add_train_flags(CLI::App& app, TrainOptions& o) {
  app.add_option("--model", o.model, "autoencoder | resnet | unet3d")
      ->check(CLI::IsMember({"autoencoder", "resnet", "unet3d"}));
  app.add_option("--resnet-depth", o.resnet_depth, "ResNet depth (10 and 18 suit a CPU; 50 as in the seeds)")
      ->check(CLI::IsMember({10, 18, 34, 50, 101, 152}));
  app.add_option("--resnet-width", o.resnet_width, "channels of the first ResNet stage")->check(CLI::Range(1, 4096));
  app.add_option("--image-size", o.image_size, "synthetic ResNet image side")->check(CLI::Range(8, 4096));
  app.add_option("--num-classes", o.num_classes, "synthetic ResNet classes")->check(CLI::Range(2, 1000000));
  app.add_option("--unet-width", o.unet_width, "channels of the first U-Net level")->check(CLI::Range(1, 4096));
  app.add_option("--crop", o.crop, "unet3d crop side (multiple of 16)")->check(CLI::Range(16, 1024));
  app.add_flag("--synthetic", o.synthetic, "generated data instead of Fashion-MNIST (unet3d always)");
  app.add_option("--synthetic-samples", o.synthetic_samples, "synthetic training samples")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  app.add_option("--data-dir", o.data_dir, "folder with the MNIST-format *-idx?-ubyte.gz files");
  app.add_option("--epochs", o.epochs, "epochs to train")->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  app.add_option("--steps", o.max_steps, "stop after this many optimizer steps in total (0: no limit)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--schedule-steps", o.schedule_steps, "length of the cosine decay (0: epochs x steps/epoch)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--global-batch-size", o.global_batch, "samples per step over all ranks")
      ->check(CLI::PositiveNumber);
  app.add_option("--batch-size", o.batch_size, "samples per step on each rank")->check(CLI::PositiveNumber);
  app.add_option("--base-batch-size", o.base_batch, "batch the base learning rate was tuned for")
      ->check(CLI::PositiveNumber);
  app.add_option("--lr-scaling", o.lr_scaling, "none | linear | sqrt")
      ->check(CLI::IsMember({"none", "linear", "sqrt"}));
  app.add_option("--lr-decay", o.lr_decay, "cosine | constant")->check(CLI::IsMember({"cosine", "constant"}));
  app.add_option("--lr", o.lr, "base learning rate (default 1e-3 Adam, 0.1 SGD)")->check(CLI::PositiveNumber);
  app.add_option("--min-lr", o.min_lr, "learning rate at the end of the cosine")->check(CLI::NonNegativeNumber);
  app.add_option("--warmup-steps", o.warmup_steps, "linear warm-up steps")->check(CLI::NonNegativeNumber);
  app.add_option("--optimizer", o.optimizer, "adam | sgd")->check(CLI::IsMember({"adam", "sgd"}));
  app.add_option("--momentum", o.momentum, "SGD momentum")->check(CLI::Range(0.0, 1.0));
  app.add_option("--weight-decay", o.weight_decay, "weight decay")->check(CLI::NonNegativeNumber);
  app.add_option("--backend", o.backend, "auto | gloo | nccl | xccl (Intel GPUs: refused, no XPU build)")
      ->check(CLI::IsMember({"auto", "gloo", "nccl", "xccl"}));
  app.add_option("--device", o.device, "auto | cpu | cuda")->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  app.add_option("--threads", o.threads,
                 "intra-op and BLAS threads per rank (0: OMP_NUM_THREADS, else the CPUs / LOCAL_WORLD_SIZE)")
      ->check(CLI::Range(0, 1024));
  app.add_option("--bucket-cap-mb", o.bucket_cap_mb, "gradient bucket size")->check(CLI::Range(0.001, 4096.0));
  app.add_option("--spin-wait-us", o.spin_wait_us,
                 "gloo: poll a collective this long before blocking on it (0: block at once)")
      ->check(CLI::Range(int64_t{0}, int64_t{10000000}));
  app.add_flag("!--no-broadcast-buffers", o.broadcast_buffers, "do not broadcast rank 0's buffers every step");
  app.add_flag("--amp", o.amp, "bfloat16 autocast (CUDA only)");
  app.add_flag("--channels-last", o.channels_last, "channels-last memory format (CUDA only)");
  app.add_flag("--cuda-graphs", o.cuda_graphs,
               "capture the whole step as a CUDA graph after 3 warm-up steps and replay it (CUDA only)");
  app.add_flag("--check-batches", o.check_batches,
               "check each batch as it reaches the device against the sampler's, gathered again on the host "
               "(a checksum per step: slow); the first mismatch ends the run (exit 1)");
  app.add_option("--optimizer-impl", o.optimizer_impl,
                 "auto (foreach on a GPU, loop on the CPU) | loop (torch::optim) | foreach (multi-tensor)")
      ->check(CLI::IsMember({"auto", "loop", "foreach"}));
  app.add_option("--on-nonfinite", o.on_nonfinite,
                 "when the loss is NaN or infinite on any rank: stop (exit 3, nothing saved) | skip-step")
      ->check(CLI::IsMember({"stop", "skip-step"}));
  app.add_option("--max-skipped-steps", o.max_skipped_steps,
                 "skip-step: stop (exit 3) after this many skipped steps in a row")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  app.add_option("--checkpoint-dir", o.checkpoint_dir, "where latest.pt and best.pt go");
  app.add_option("--checkpoint-every", o.checkpoint_every, "also save every N steps")->check(CLI::NonNegativeNumber);
  app.add_flag("--resume", o.resume, "continue from CHECKPOINT_DIR/latest.pt when it exists");
  app.add_option("--resume-from", o.resume_from, "continue from this checkpoint");
  app.add_option("--metrics", o.metrics_file, "JSON lines per step and per validation (rank 0)");
  app.add_option("--log-every", o.log_every, "progress line every N steps")->check(CLI::PositiveNumber);
  app.add_option("--val-batches", o.val_batches, "validation batches per rank (0: all)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("!--no-validation", o.validate, "skip validation");
  app.add_option("--seed", o.seed, "seed of initialisation, shuffling and synthetic data");
  app.add_flag("!--no-shuffle", o.shuffle, "keep dataset order");
}

Invocation parse_tool(Command command, const std::vector<std::string>& args) {
  Invocation inv;
  inv.command = command;
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--tolerance" && i + 1 < args.size()) {
      char* end = nullptr;
      inv.tolerance = std::strtod(args[i + 1].c_str(), &end);
      if (*end != '\0' || inv.tolerance < 0)
        throw Error("--tolerance", "'" + args[i + 1] + "' is not a non-negative number", "e.g. --tolerance 1e-5");
      ++i;
    } else {
      inv.files.push_back(args[i]);
    }
  }
  const size_t want = command == Command::inspect ? 1 : 2;
  if (inv.files.size() != want)
    throw Error(args[0], "expects " + std::to_string(want) + " checkpoint file(s), got " +
                             std::to_string(inv.files.size()),
                command == Command::inspect ? "hpclaunch-train inspect FILE"
                                            : "hpclaunch-train compare A.pt B.pt [--tolerance 1e-5]");
  return inv;
}

// Parses `args` into `app`'s options; true when they asked for --help or --version, which `inv` then says (help:
// the help text; version: the line without the loaded NCCL, which the program adds). Both programs' parsers end so.
template <class Inv>
bool help_or_version(CLI::App& app, const std::vector<std::string>& args, const char* program, Inv& inv) {
  switch (hpclaunch::parse_cli(app, args, program)) {
    case hpclaunch::Parsed::help:
      inv.command = Command::help;
      inv.help_text = app.help();
      return true;
    case hpclaunch::Parsed::version:
      inv.command = Command::version;
      inv.help_text = version_line(program, 0) + "\n";
      return true;
    case hpclaunch::Parsed::flags: break;
  }
  return false;
}

}  // namespace

std::string version_line(const std::string& program, int64_t loaded_nccl) {
  std::string line = program + " " HPCLAUNCH_VERSION " (" HPCTRAIN_BUILT_WITH;
  if (loaded_nccl > 0) line += (line.find(" NCCL ") == std::string::npos ? ", NCCL " : ", ") +
                               nccl_version_text(loaded_nccl) + " loaded";
  return line + ")";
}

Invocation parse_command_line(const std::vector<std::string>& args) {
  if (!args.empty() && args[0] == "inspect") return parse_tool(Command::inspect, args);
  if (!args.empty() && args[0] == "compare") return parse_tool(Command::compare, args);

  Invocation inv;
  CLI::App app{"hpclaunch-train: a LibTorch DDP trainer (autoencoder, resnet, unet3d)\n"
               "  also: hpclaunch-train inspect FILE | compare A.pt B.pt [--tolerance X]",
               "hpclaunch-train"};
  app.set_version_flag("--version", version_line("hpclaunch-train", 0));
  add_train_flags(app, inv.options);
  if (help_or_version(app, args, "hpclaunch-train", inv)) return inv;
  TrainOptions& o = inv.options;
  o.explicit_batch = o.global_batch > 0 || o.batch_size > 0;
  if (o.global_batch > 0 && o.batch_size > 0)
    throw Error("--batch-size", "given together with --global-batch-size", "pass only one of them");
  if (o.resume && !o.resume_from.empty())
    throw Error("--resume", "given together with --resume-from", "pass only one of them");
  if (o.resume && o.checkpoint_dir.empty())
    throw Error("--resume", "needs --checkpoint-dir", "pass --checkpoint-dir DIR (latest.pt is read from it)");
  if (o.model == "unet3d" && o.crop % 16 != 0)
    throw Error("--crop", std::to_string(o.crop) + " is not a multiple of 16", "the U-Net halves it four times");
  if (o.model == "unet3d") o.synthetic = true;  // no 3D volumes ship with Debian: generated crops only
  apply_model_defaults(&o);
  return inv;
}

ProbeInvocation parse_probe_command_line(const std::vector<std::string>& args) {
  ProbeInvocation inv;
  ProbeOptions& o = inv.options;
  CLI::App app("Preflight: GPUs per node, a per-node speed probe and an allreduce bandwidth sweep.", "hpclaunch-probe");
  app.add_option("--min-bytes", o.min_bytes, "smallest allreduce message")->capture_default_str()->check(CLI::Range(4.0, 1e10));
  app.add_option("--max-bytes", o.max_bytes, "largest allreduce message")->capture_default_str()->check(CLI::Range(4.0, 1e10))
      ->envname("HPCLAUNCH_CHECK_MAX_BYTES");  // a job's --env shortens the sweep of `submit --preflight`
  app.add_option("--expect-gpus", o.expect_gpus, "GPUs every node must show (0: not checked)")->check(CLI::Range(0, 64));
  app.add_option("--slow-factor", o.slow_factor, "a node slower than this times the median node is bad")
      ->capture_default_str()->check(CLI::Range(1.0, 1000.0))
      ->envname("HPCLAUNCH_CHECK_SLOW_FACTOR");  // as HPCLAUNCH_CHECK_MAX_BYTES, for `submit --preflight`
  app.add_option("--expect-busbw", o.expect_busbw, "GB/s of busbw this interconnect gives; below half is flagged")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--expect-nvlink-busbw", o.expect_nvlink_busbw,
                 "GB/s of busbw inside one NVLink domain; a domain below half is flagged")->check(CLI::NonNegativeNumber);
  app.add_option("--segment", o.segment, "nodes per NVLink segment (an NVL72 rack: up to 18): each run of this many "
                 "nodes must be in one NVLink domain (0: not checked)")->check(CLI::Range(0, 1 << 20));
  app.add_option("--json", o.json, "write the report here (default: $HPCLAUNCH_JOB_DIR/preflight.json)");
  app.add_option("--backend", o.backend, "auto (NCCL on GPU, else gloo), gloo or nccl")
      ->check(CLI::IsMember({"auto", "gloo", "nccl"}));
  app.set_version_flag("--version", version_line("hpclaunch-probe", 0));
  if (help_or_version(app, args, "hpclaunch-probe", inv)) return inv;
  if (o.min_bytes > o.max_bytes) throw Error("--min-bytes", "is above --max-bytes", "swap them");
  return inv;
}

void apply_model_defaults(TrainOptions* o) {
  if (o->batch_size == 0 && o->global_batch == 0) o->batch_size = o->model == "autoencoder" ? 128 : o->model == "resnet" ? 32 : 1;
  if (o->lr == 0.0) o->lr = o->optimizer == "sgd" ? 0.1 : 1e-3;
  if (o->synthetic_samples == 0)
    o->synthetic_samples = o->model == "autoencoder" ? 60000 : o->model == "resnet" ? 10000 : 256;
}

NonfiniteHook parse_nonfinite_hook(const char* value) {
  NonfiniteHook hook;
  if (value == nullptr || *value == '\0') return hook;
  std::vector<long long> parts;
  for (const char* p = value;;) {
    char* end = nullptr;
    parts.push_back(std::strtoll(p, &end, 10));
    if (end == p || (*end != ':' && *end != '\0')) {
      parts.clear();
      break;
    }
    if (*end == '\0') break;
    p = end + 1;
  }
  const long long rank = parts.empty() ? -1 : parts[0], step = parts.size() > 1 ? parts[1] : 0;
  const long long count = parts.size() > 2 ? parts[2] : 1;
  if (parts.size() < 2 || parts.size() > 3 || rank < 0 || step < 1 || count < 1)
    throw Error("HPCLAUNCH_TRAIN_NONFINITE", std::string("'") + value + "' is not RANK:STEP[:COUNT]",
                "e.g. 1:5 (rank 1's loss is NaN at step 5) or 0:3:20; unset it outside tests");
  hook.rank = static_cast<int>(rank);
  hook.first_step = step;
  hook.count = count;
  return hook;
}

namespace {

// A test hook's whole number from the environment: `fallback` when unset or empty; outside [least, most] or not a
// number throws hpclaunch::Error naming the variable.
int64_t hook_number(const std::function<const char*(const char*)>& getenv, const char* name, int64_t least,
                    int64_t fallback, const std::string& what, const std::string& example,
                    int64_t most = std::numeric_limits<int64_t>::max()) {
  const char* text = getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (*end != '\0' || value < least || value > most)
    throw Error(name, std::string("'") + text + "' is not " + what, "e.g. " + example + "; unset it outside tests");
  return value;
}

}  // namespace

TestHooks read_test_hooks(const std::function<const char*(const char*)>& getenv) {
  TestHooks hooks;
  hooks.nonfinite = parse_nonfinite_hook(getenv("HPCLAUNCH_TRAIN_NONFINITE"));
  hooks.step_sleep_ms = hook_number(getenv, "HPCLAUNCH_TRAIN_STEP_SLEEP_MS", 0, 0, "a number of milliseconds", "200");
  hooks.stale_batch_step = hook_number(getenv, "HPCLAUNCH_TRAIN_STALE_BATCH", 2, 0, "a step number of 2 or more",
                                       "3 (step 3 gets step 2's samples)");
  hooks.resident_batch =
      hook_number(getenv, "HPCLAUNCH_TRAIN_RESIDENT_BATCH", 0, 0, "0 or 1", "1 (every step the first batch)", 1) == 1;
  return hooks;
}

int threads_per_rank(int flag, int available_cpus, const std::function<const char*(const char*)>& getenv) {
  if (flag > 0) return flag;
  auto positive = [&](const char* name) {
    const char* text = getenv(name);
    if (text == nullptr) return 0L;
    char* end = nullptr;
    const long value = std::strtol(text, &end, 10);
    return *text != '\0' && *end == '\0' && value > 0 ? value : 0L;
  };
  if (const long omp = positive("OMP_NUM_THREADS"); omp > 0) return static_cast<int>(omp);
  const long ranks = std::max(1L, positive("LOCAL_WORLD_SIZE"));
  return static_cast<int>(std::max(1L, available_cpus / ranks));
}

DistEnv read_dist_env(const std::function<const char*(const char*)>& getenv) {
  auto integer = [&](const char* name, int low, int high, int fallback) {
    const char* text = getenv(name);
    if (text == nullptr || *text == '\0') return fallback;
    char* end = nullptr;
    const long value = std::strtol(text, &end, 10);
    if (*end != '\0' || value < low || value > high)
      throw Error(name, std::string("'") + text + "' is not an integer in [" + std::to_string(low) + ", " +
                            std::to_string(high) + "]",
                  "fix the launcher's environment or unset it for a world of one");
    return static_cast<int>(value);
  };
  DistEnv env;
  env.world_size = integer("WORLD_SIZE", 1, 1 << 24, 1);
  env.rank = integer("RANK", 0, env.world_size - 1, 0);
  env.local_rank = integer("LOCAL_RANK", 0, 1 << 16, 0);
  env.master_port = integer("MASTER_PORT", 1, 65535, 29500);
  if (const char* addr = getenv("MASTER_ADDR"); addr != nullptr && *addr != '\0') env.master_addr = addr;
  if (env.world_size > 1) {
    if (getenv("RANK") == nullptr) throw Error("RANK", "unset while WORLD_SIZE > 1", "export RANK for every process");
    if (getenv("MASTER_ADDR") == nullptr)
      throw Error("MASTER_ADDR", "unset while WORLD_SIZE > 1", "export the address of rank 0's host");
    if (getenv("MASTER_PORT") == nullptr)
      throw Error("MASTER_PORT", "unset while WORLD_SIZE > 1", "export a free TCP port on rank 0's host");
  }
  if (const char* agent = getenv("TORCHELASTIC_USE_AGENT_STORE"); agent != nullptr)
    env.agent_store = std::string(agent) == "True" || std::string(agent) == "1";
  if (const char* count = getenv("TORCHELASTIC_RESTART_COUNT"); count != nullptr && *count != '\0')
    env.restart_count = count;
  return env;
}

}  // namespace hpctrain
