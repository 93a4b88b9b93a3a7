// The training run: see trainer.h.
#include "trainer.h"

#include <ATen/autocast_mode.h>
#include <dlfcn.h>
#include <sched.h>
#include <time.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <thread>

#include "atomic_file.h"
#include "checkpoint.h"
#include "data.h"
#include "ddp.h"
#include "metrics/records.h"
#include "metrics_log.h"
#include "models.h"
#include "sampler.h"
#include "schedule.h"
#include "signals.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

namespace hpctrain {
namespace {

using Clock = std::chrono::steady_clock;
using hpclaunch::Error;
namespace metrics = hpclaunch::metrics;

double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// CPU time of the whole process (every thread, gloo's included), for load-independent efficiency numbers.
double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

torch::Device choose_device(const TrainOptions& o, const DistEnv& env) {
  const bool cuda = torch::cuda::is_available();
  if (o.device == "cuda" && !cuda)
    throw Error("--device", "cuda requested but no CUDA device is visible", "use --device cpu or run on a GPU node");
  if (o.device == "cpu" || !cuda) return torch::Device(torch::kCPU);
  const int count = static_cast<int>(torch::cuda::device_count());
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(env.local_rank % count));
}

std::string choose_backend(const TrainOptions& o, const torch::Device& device) {
  const std::string backend = o.backend != "auto" ? o.backend : device.is_cuda() ? "nccl" : "gloo";
  if (backend == "nccl" && !device.is_cuda())
    throw Error("--backend", "nccl needs CUDA tensors but the device is the CPU", "use --backend gloo");
  return backend;
}

// Seconds since the Unix epoch (TensorBoard's wall_time): `hpclaunch plot` measures wall time from the first record.
double unix_time() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The --metrics file: one record (metrics/records.h) per line, flushed as written; rank 0 only.
class MetricsFile {
 public:
  explicit MetricsFile(const std::string& path) {
    if (path.empty()) return;
    std::error_code ec;
    auto parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);  // fopen below reports what failed
    m_file = std::fopen(path.c_str(), "a");
    if (m_file == nullptr) throw Error("--metrics", "cannot open " + path + " for writing: " + std::strerror(errno), "check the path and its permissions");
  }
  ~MetricsFile() {
    if (m_file) std::fclose(m_file);
  }
  // A line per record for whoever follows the file (a few microseconds).
  void write(const metrics::Record& record) {
    if (!m_file) return;
    std::fputs(metrics::to_line(record).c_str(), m_file);
    std::fflush(m_file);
  }

 private:
  std::FILE* m_file = nullptr;
};

// The CPUs this process may run on (its affinity mask: a Slurm task's cores), at least 1.
int available_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// Gives OpenBLAS (Debian's libopenblas0-pthread behind libblas.so.3) the same thread count as Torch's intra-op
// pool, so ranks sharing a node do not each start a pool per core; returns false when the BLAS is no OpenBLAS.
bool set_blas_threads(int threads) {
  using SetThreads = void (*)(int);
  auto* set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  if (set == nullptr) return false;
  set(threads);
  return true;
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const TrainOptions& o, std::vector<torch::Tensor> params) {
  if (o.optimizer == "sgd")
    return std::make_unique<torch::optim::SGD>(
        params, torch::optim::SGDOptions(o.lr).momentum(o.momentum).weight_decay(o.weight_decay));
  return std::make_unique<torch::optim::Adam>(params, torch::optim::AdamOptions(o.lr).weight_decay(o.weight_decay));
}

void set_lr(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) {
    if (auto* adam = dynamic_cast<torch::optim::AdamOptions*>(&group.options())) adam->lr(lr);
    else if (auto* sgd = dynamic_cast<torch::optim::SGDOptions*>(&group.options())) sgd->lr(lr);
  }
}

struct Run {
  const TrainOptions& o;
  const DistEnv& env;
  torch::Device device{torch::kCPU};
  std::unique_ptr<Communicator> comm;
  DataSplit data;
  std::shared_ptr<TrainModel> model;
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::unique_ptr<GradientReducer> reducer;
  std::vector<torch::Tensor> buffers;
  BatchPlan batch;
  LrSchedule schedule;
  TrainState state;
  int64_t steps_per_epoch = 0;
  int threads = 1;        // intra-op and BLAS threads of this rank
  bool openblas = false;  // the BLAS is OpenBLAS and got the same count
  bool rank0() const { return env.rank == 0; }
  std::string latest_path() const { return o.checkpoint_dir + "/latest.pt"; }
};

torch::Tensor to_device(const torch::Tensor& t, const Run& run) {
  torch::Tensor out = t.to(run.device, /*non_blocking=*/true);
  if (run.o.channels_last && out.dim() == 4) out = out.contiguous(torch::MemoryFormat::ChannelsLast);
  return out;
}

double validate(Run& run) {
  const auto start = Clock::now();
  DistributedSampler sampler(run.data.val->size(), run.env.world_size, run.env.rank, false, run.o.seed);
  const std::vector<int64_t> shard = sampler.shard(0);
  torch::NoGradGuard no_grad;
  run.model->eval();
  double sum = 0.0, count = 0.0;
  int64_t batches = 0;
  for (size_t begin = 0; begin < shard.size(); begin += static_cast<size_t>(run.batch.local_batch)) {
    if (run.o.val_batches > 0 && batches++ >= run.o.val_batches) break;
    const size_t end = std::min(shard.size(), begin + static_cast<size_t>(run.batch.local_batch));
    const Batch b = run.data.val->gather({shard.begin() + static_cast<std::ptrdiff_t>(begin),
                                          shard.begin() + static_cast<std::ptrdiff_t>(end)});
    const torch::Tensor out = run.model->forward(to_device(b.input, run));
    const double n = static_cast<double>(end - begin);
    sum += run.model->loss(out.to(torch::kFloat32), to_device(b.target, run)).item<double>() * n;
    count += n;
  }
  run.model->train();
  torch::Tensor totals = torch::tensor({sum, count}, torch::kFloat64).to(run.device);
  run.comm->allreduce_sum(totals);
  totals = totals.cpu();
  const double mean = totals[0].item<double>() / std::max(totals[1].item<double>(), 1.0);
  if (run.rank0()) std::fprintf(stdout, "validation: epoch %lld loss %.6g (%.1f s)\n",
                                static_cast<long long>(run.state.epoch + 1), mean, since(start));
  return mean;
}

// Every rank ends with the same parameters if DDP works: the largest difference of any rank from the mean.
double replica_deviation(Run& run) {
  if (run.env.world_size == 1) return 0.0;
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> flat;
  for (const auto& p : run.model->parameters()) flat.push_back(p.detach().reshape({-1}).to(torch::kFloat64));
  const torch::Tensor mine = torch::cat(flat);
  torch::Tensor mean = mine.clone();
  run.comm->allreduce_sum(mean);
  mean.div_(run.env.world_size);
  torch::Tensor deviation = (mine - mean).abs().max().reshape({1});
  run.comm->allreduce_sum(deviation);
  return deviation.cpu().item<double>();
}

bool parameters_finite(torch::nn::Module& model) {
  torch::NoGradGuard no_grad;
  for (const auto& p : model.parameters())
    if (!torch::isfinite(p).all().item<bool>()) return false;
  return true;
}

// Rank 0 writes the checkpoint; weights that are not finite are never written (the last good file stays).
void save(Run& run, const std::string& path) {
  if (run.o.checkpoint_dir.empty() || !run.rank0()) return;
  if (!parameters_finite(*run.model)) {
    std::fprintf(stderr, "hpclaunch-train: not saving %s at step %lld: parameters are not finite (the file stays as it was)\n",
                 path.c_str(), static_cast<long long>(run.state.global_step));
    return;
  }
  save_checkpoint(path, *run.model, *run.optimizer, run.state);
}

// The ranks whose own loss was not finite this step (one small allreduce, only after a non-finite step).
std::vector<int> nonfinite_ranks(Run& run, bool mine) {
  torch::Tensor flags = torch::zeros({run.env.world_size}, torch::kFloat32);
  flags[run.env.rank] = mine ? 1.0f : 0.0f;
  flags = flags.to(run.device);
  run.comm->allreduce_sum(flags);
  flags = flags.cpu();
  std::vector<int> ranks;
  for (int r = 0; r < run.env.world_size; ++r)
    if (flags[r].item<float>() > 0) ranks.push_back(r);
  return ranks;
}

std::string join_ranks(const std::vector<int>& ranks) {
  std::string out;
  for (int r : ranks) out += (out.empty() ? "" : ", ") + std::to_string(r);
  return (ranks.size() == 1 ? "rank " : "ranks ") + out;
}

void setup(Run& run) {
  const TrainOptions& o = run.o;
  run.threads = threads_per_rank(o.threads, available_cpus(), [](const char* name) { return std::getenv(name); });
  torch::set_num_threads(run.threads);
  run.openblas = set_blas_threads(run.threads);
  run.device = choose_device(o, run.env);
  if ((o.amp || o.channels_last) && !run.device.is_cuda())
    throw Error(o.amp ? "--amp" : "--channels-last", "only for CUDA devices and this run is on the CPU",
                "drop the flag on CPU runs");
  // Everything that can be wrong with the input fails before connecting, so no rank waits for a dead peer.
  if (o.explicit_batch) plan_batch(o.global_batch, o.batch_size, o.base_batch, run.env.world_size);
  if (!o.resume_from.empty() && !std::filesystem::exists(o.resume_from))
    throw Error("--resume-from", o.resume_from + " does not exist", "pass an existing checkpoint or use --resume");
  const std::string backend = choose_backend(o, run.device);
  run.data = load_data(o);
  run.comm = Communicator::connect(run.env, backend);
  // Polling only pays where the CPU does the collective (gloo); NCCL's wait just orders the CUDA streams.
  run.comm->set_spin_wait(std::chrono::microseconds(backend == "gloo" ? o.spin_wait_us : 0));

  // Resume: the checkpoint decides the position; flags must describe the same model and global batch.
  std::string resume_path = o.resume_from;
  if (o.resume && std::filesystem::exists(run.latest_path())) resume_path = run.latest_path();
  else if (o.resume && run.rank0())
    std::fprintf(stdout, "no %s yet: starting from scratch\n", run.latest_path().c_str());
  Checkpoint checkpoint;
  if (!resume_path.empty()) {
    checkpoint = read_checkpoint(resume_path);
    if (!checkpoint.state.model.empty() && checkpoint.state.model != o.model)
      throw Error("--model", "is " + o.model + " but " + resume_path + " holds a " + checkpoint.state.model,
                  "pass --model " + checkpoint.state.model);
  }
  const int64_t saved_global = checkpoint.state.global_batch;
  if (!o.explicit_batch && saved_global > 0) run.batch = plan_batch(saved_global, 0, o.base_batch, run.env.world_size);
  else run.batch = plan_batch(o.global_batch, o.batch_size, o.base_batch, run.env.world_size);
  if (saved_global > 0 && run.batch.global_batch != saved_global)
    throw Error("--global-batch-size", "is " + std::to_string(run.batch.global_batch) + " but " + resume_path +
                                           " was trained with " + std::to_string(saved_global),
                "resume with --global-batch-size " + std::to_string(saved_global));

  DistributedSampler sampler(run.data.train->size(), run.env.world_size, run.env.rank, o.shuffle, o.seed);
  run.steps_per_epoch = sampler.batches_per_epoch(run.batch.local_batch);
  if (run.steps_per_epoch == 0)
    throw Error("--batch-size", "per-rank batch " + std::to_string(run.batch.local_batch) + " exceeds the " +
                                    std::to_string(sampler.samples_per_rank()) + " samples each rank has",
                "use a smaller batch or more samples");

  ModelSpec spec = run.data.spec;
  spec.resnet_depth = o.resnet_depth;
  spec.resnet_width = o.resnet_width;
  spec.unet_width = o.unet_width;
  torch::manual_seed(o.seed);
  run.model = make_model(spec);
  run.model->to(run.device);
  if (o.channels_last) {
    torch::NoGradGuard no_grad;
    for (auto& p : run.model->parameters())
      if (p.dim() == 4) p.set_data(p.data().contiguous(torch::MemoryFormat::ChannelsLast));
  }
  run.optimizer = make_optimizer(o, run.model->parameters());
  run.state.model = o.model;
  run.state.optimizer = o.optimizer;
  run.state.seed = o.seed;
  run.state.global_batch = run.batch.global_batch;
  run.state.world_size = run.env.world_size;
  if (!resume_path.empty()) {
    load_model_state(*run.model, checkpoint, resume_path);
    if (checkpoint.state.optimizer == o.optimizer) load_optimizer_state(*run.optimizer, checkpoint, run.device);
    else if (run.rank0() && !checkpoint.state.optimizer.empty())
      std::fprintf(stdout, "%s: optimizer was %s, now %s: its state starts fresh\n", resume_path.c_str(),
                   checkpoint.state.optimizer.c_str(), o.optimizer.c_str());
    if (checkpoint.rng_state.defined()) {
      at::Generator generator = at::detail::getDefaultCPUGenerator();  // shares the default's state
      generator.set_state(checkpoint.rng_state);
    }
    if (!checkpoint.state.model.empty()) {
      run.state.epoch = checkpoint.state.epoch;
      run.state.next_batch = checkpoint.state.next_batch;
      run.state.global_step = checkpoint.state.global_step;
      run.state.best_val_loss = checkpoint.state.best_val_loss;
    }
    if (run.rank0())
      std::fprintf(stdout, "resumed from %s at epoch %lld, step %lld\n", resume_path.c_str(),
                   static_cast<long long>(run.state.epoch + 1), static_cast<long long>(run.state.global_step));
  }

  run.schedule.peak_lr = scaled_lr(o.lr, [&] {
    LrScaling s = LrScaling::none;
    parse_lr_scaling(o.lr_scaling, &s);
    return s;
  }(), run.batch.global_batch, run.batch.base_batch);
  parse_lr_decay(o.lr_decay, &run.schedule.decay);
  run.schedule.min_lr = o.min_lr;
  run.schedule.warmup_steps = o.warmup_steps;
  run.schedule.total_steps = o.schedule_steps > 0 ? o.schedule_steps : o.epochs * run.steps_per_epoch;

  std::vector<torch::Tensor> everything = run.model->parameters();
  for (auto& b : run.model->buffers()) {
    everything.push_back(b);
    run.buffers.push_back(b);
  }
  run.comm->broadcast(everything);
  const auto cap = static_cast<int64_t>(o.bucket_cap_mb * 1024 * 1024);
  run.reducer = std::make_unique<GradientReducer>(run.model->parameters(), run.comm.get(), cap,
                                                  std::min<int64_t>(cap, 1 << 20));
  if (run.rank0() && !o.checkpoint_dir.empty()) {
    std::filesystem::create_directories(o.checkpoint_dir);
    remove_stale_temporaries(run.latest_path());
    remove_stale_temporaries(o.checkpoint_dir + "/best.pt");
  }
  if (run.rank0()) {
    int64_t count = 0;
    for (const auto& p : run.model->parameters()) count += p.numel();
    std::fprintf(stdout,
                 "hpclaunch-train: %s (%lld parameters) on %s, %d rank(s), backend %s, %zu gradient bucket(s)\n"
                 "  data: %s\n  batch: %lld per rank, %lld global (base %lld), lr %.4g -> peak %.4g, %lld steps/epoch\n"
                 "  threads: %d per rank (intra-op%s)\n",
                 o.model.c_str(), static_cast<long long>(count), run.device.str().c_str(), run.env.world_size,
                 run.comm->backend().c_str(), run.reducer->bucket_count(), run.data.description.c_str(),
                 static_cast<long long>(run.batch.local_batch), static_cast<long long>(run.batch.global_batch),
                 static_cast<long long>(run.batch.base_batch), o.lr, run.schedule.peak_lr,
                 static_cast<long long>(run.steps_per_epoch), run.threads,
                 run.openblas ? ", OpenBLAS" : "; the BLAS is not OpenBLAS");
    std::fflush(stdout);
  }
}

}  // namespace

int run_training(const TrainOptions& o, const DistEnv& env) {
  install_signal_handlers();  // main() did it already; here for callers that are not main()
  // Test hook: make one rank's loss NaN (read first, so a bad value fails before connecting).
  const NonfiniteHook nan_hook = parse_nonfinite_hook(std::getenv("HPCLAUNCH_TRAIN_NONFINITE"));
  Run run{o, env};
  setup(run);
  const bool resuming = o.resume || !o.resume_from.empty();
  if (run.rank0() && resuming && !o.metrics_file.empty()) {
    // Records a killed run wrote after its last checkpoint: those steps are trained again now.
    const int dropped = truncate_metrics_file(o.metrics_file, run.state.global_step);
    if (dropped > 0)
      std::fprintf(stdout, "%s: dropped %d record(s) after step %lld, the checkpoint's\n", o.metrics_file.c_str(),
                   dropped, static_cast<long long>(run.state.global_step));
  }
  MetricsFile metrics(run.rank0() ? o.metrics_file : "");
  {
    metrics::RunStart start;
    start.step = run.state.global_step;
    start.model = o.model;
    start.world_size = env.world_size;
    start.global_batch = run.batch.global_batch;
    start.on_nonfinite = o.on_nonfinite;
    start.time = unix_time();
    metrics.write(start);
  }
  DistributedSampler sampler(run.data.train->size(), env.world_size, env.rank, o.shuffle, o.seed);

  // Test hook: paces the steps so a test's training takes about as long on any machine.
  const char* sleep_text = std::getenv("HPCLAUNCH_TRAIN_STEP_SLEEP_MS");
  const std::chrono::milliseconds step_sleep(sleep_text ? std::atoll(sleep_text) : 0);
  const bool skip_nonfinite = o.on_nonfinite == "skip-step";
  const auto run_start = Clock::now();
  int64_t trained_samples = 0;
  double train_seconds = 0.0;
  auto window_start = Clock::now();
  int64_t window_steps = 0;
  bool stopped = false, done = false, validated_last = false;
  int64_t skipped = 0, skipped_in_a_row = 0;
  std::optional<int64_t> last_finite_step;
  double last_finite_loss = std::numeric_limits<double>::quiet_NaN();
  metrics::RunEnd diverged;  // status "nonfinite" once the run must stop

  auto end_epoch = [&] {
    if (o.validate) {
      const auto start = Clock::now();
      const double val = validate(run);
      metrics::Validation v;
      v.epoch = run.state.epoch + 1;
      v.step = run.state.global_step;
      v.val_loss = val;
      v.time_s = since(start);
      v.time = unix_time();
      metrics.write(v);
      if (val < run.state.best_val_loss) {
        run.state.best_val_loss = val;
        save(run, o.checkpoint_dir + "/best.pt");
      }
    }
    validated_last = true;
  };

  while (run.state.epoch < o.epochs && !done) {
    const std::vector<int64_t> shard = sampler.shard(run.state.epoch);
    while (run.state.next_batch < run.steps_per_epoch) {
      if (o.max_steps > 0 && run.state.global_step >= o.max_steps) {
        done = true;
        break;
      }
      const auto step_start = Clock::now();
      const double cpu_start = process_cpu_seconds();
      const int64_t batch_index = run.state.next_batch;
      const int64_t step_number = run.state.global_step + 1;
      const double lr = run.schedule.at(run.state.global_step);
      set_lr(*run.optimizer, lr);
      const Batch b = run.data.train->gather(DistributedSampler::batch(shard, batch_index, run.batch.local_batch));
      const torch::Tensor input = to_device(b.input, run), target = to_device(b.target, run);
      if (o.broadcast_buffers) run.comm->broadcast(run.buffers);
      run.reducer->prepare();
      torch::Tensor loss;
      {
        at::autocast::set_enabled(o.amp);
        if (o.amp) at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
        const torch::Tensor out = run.model->forward(input);
        at::autocast::set_enabled(false);
        loss = run.model->loss(out.to(torch::kFloat32), target);
      }
      if (nan_hook.applies(env.rank, step_number)) loss = loss * std::numeric_limits<float>::quiet_NaN();
      torch::Tensor control = run.reducer->control();
      torch::Tensor my_nonfinite;
      {
        torch::NoGradGuard no_grad;
        control[0].fill_(stop_requested() ? 1.0 : 0.0);
        control[1].fill_(take_save_request() ? 1.0 : 0.0);
        control[2].copy_(loss.detach());
        my_nonfinite = torch::isfinite(loss.detach()).logical_not();  // stays on the device: no sync here
        control[3].copy_(my_nonfinite);
      }
      loss.backward();
      run.reducer->finish();
      // Every rank reads the same means, so every rank takes (or skips) the step and stops alike.
      const torch::Tensor flags = control.cpu();
      const float* f = flags.data_ptr<float>();
      const bool nonfinite = f[3] > 0.0f || !std::isfinite(f[2]);
      bool stop_here = false;
      std::vector<int> bad_ranks;
      if (!nonfinite) {
        run.optimizer->step();
        skipped_in_a_row = 0;
        last_finite_step = step_number;
        last_finite_loss = f[2];
      } else {
        bad_ranks = nonfinite_ranks(run, my_nonfinite.cpu().item<bool>());
        if (skip_nonfinite) ++skipped, ++skipped_in_a_row;
        stop_here = !skip_nonfinite || skipped_in_a_row >= o.max_skipped_steps;
        if (stop_here) {
          diverged.status = "nonfinite";
          diverged.nonfinite_step = step_number;
          diverged.nonfinite_ranks = bad_ranks;
        }
      }
      if (!stop_here) {
        ++run.state.global_step;
        ++run.state.next_batch;  // from here on the state is the position to continue from
      }
      validated_last = false;

      const double step_s = since(step_start);
      trained_samples += run.batch.global_batch;
      train_seconds += step_s;
      ++window_steps;
      if (run.rank0()) {
        metrics::Step record;
        record.epoch = run.state.epoch + 1;
        record.step = step_number;
        record.loss = f[2];
        record.lr = lr;
        record.samples_per_s = static_cast<double>(run.batch.global_batch) / step_s;
        record.step_time_s = step_s;
        record.allreduce_s = run.reducer->last_wait_seconds();
        record.cpu_s = process_cpu_seconds() - cpu_start;
        record.time = unix_time();
        record.skipped = nonfinite && skip_nonfinite;
        metrics.write(record);
        if (nonfinite && !stop_here)
          std::fprintf(stdout, "step %lld: non-finite loss on %s: optimizer step skipped (%lld in a row, %lld in all)\n",
                       static_cast<long long>(step_number), join_ranks(bad_ranks).c_str(),
                       static_cast<long long>(skipped_in_a_row), static_cast<long long>(skipped));
        if (run.state.global_step % o.log_every == 0 && !nonfinite) {
          const double window_s = since(window_start);
          std::fprintf(stdout, "epoch %lld step %lld/%lld loss %.5f lr %.3e samples/s %.1f\n",
                       static_cast<long long>(run.state.epoch + 1), static_cast<long long>(batch_index + 1),
                       static_cast<long long>(run.steps_per_epoch), f[2], lr,
                       static_cast<double>(window_steps * run.batch.global_batch) / window_s);
          std::fflush(stdout);
          window_start = Clock::now();
          window_steps = 0;
        }
      }
      if (stop_here) {
        done = true;
        break;
      }
      const bool stop = f[0] > 0.0f, save_now = f[1] > 0.0f;
      const bool periodic = o.checkpoint_every > 0 && run.state.global_step % o.checkpoint_every == 0;
      if (stop || save_now || periodic) save(run, run.latest_path());
      if (stop) {
        stopped = done = true;
        break;
      }
      if (step_sleep.count() > 0) std::this_thread::sleep_for(step_sleep);
    }
    if (done) break;
    end_epoch();
    ++run.state.epoch;
    run.state.next_batch = 0;
    save(run, run.latest_path());
  }

  metrics::RunEnd end = diverged;
  end.step = run.state.global_step;
  end.skipped_steps = skipped;
  end.time = unix_time();
  if (end.status == "nonfinite") {
    // One line, rank 0; nothing is saved, so latest.pt and best.pt stay the last good ones.
    end.exit_code = k_exit_nonfinite;
    end.last_finite_step = last_finite_step;
    end.last_finite_loss = last_finite_loss;
    if (run.rank0()) {
      metrics.write(end);
      char last[96] = "no finite loss before it";
      if (last_finite_step)
        std::snprintf(last, sizeof last, "last finite loss %.6g at step %lld", last_finite_loss,
                      static_cast<long long>(*last_finite_step));
      const std::string how =
          skip_nonfinite ? "non-finite loss for " + std::to_string(skipped_in_a_row) + " steps in a row (--max-skipped-steps " +
                               std::to_string(o.max_skipped_steps) + ")"
                         : "non-finite loss";
      std::fprintf(stderr,
                   "hpclaunch-train: error: step %lld: %s on %s of %d (%s); stopped without saving, %s; exit %d%s; %s\n",
                   static_cast<long long>(*end.nonfinite_step), how.c_str(), join_ranks(end.nonfinite_ranks).c_str(),
                   env.world_size, last,
                   o.checkpoint_dir.empty() ? "no --checkpoint-dir" : "the checkpoints stay the last good ones",
                   k_exit_nonfinite, skipped > 0 ? (", " + std::to_string(skipped) + " step(s) skipped").c_str() : "",
                   skip_nonfinite ? "lower --lr, or allow more with --max-skipped-steps"
                                  : "lower --lr, or skip such steps with --on-nonfinite skip-step (--resume starts "
                                    "from the checkpoint)");
      std::fflush(stderr);
    }
    return k_exit_nonfinite;
  }
  if (stopped) {
    // Said before the barrier: once one rank exits 99, `srun --kill-on-bad-exit` may end the others.
    end.status = "stopped";
    end.exit_code = k_exit_requeue;
    if (run.rank0()) {
      metrics.write(end);
      std::fprintf(stdout, "stopped by signal at step %lld; checkpoint %s; exit %d (requeue)\n",
                   static_cast<long long>(run.state.global_step),
                   o.checkpoint_dir.empty() ? "not written (no --checkpoint-dir)" : run.latest_path().c_str(),
                   k_exit_requeue);
      std::fflush(stdout);
    }
    run.comm->barrier();  // everyone leaves after rank 0's checkpoint is on disk
    return k_exit_requeue;
  }
  if (!validated_last && run.state.global_step > 0) {
    end_epoch();
    save(run, run.latest_path());
  }
  const double deviation = replica_deviation(run);
  if (run.rank0() && run.env.world_size > 1)
    std::fprintf(stdout, "replicas: max parameter deviation between ranks %.3g%s\n", deviation,
                 deviation == 0.0 ? " (identical)" : "");
  if (run.rank0()) {
    end.status = "done";
    end.exit_code = k_exit_ok;
    end.time = unix_time();
    metrics.write(end);
    const double best = run.state.best_val_loss;
    std::fprintf(stdout, "done: %lld steps in %.1f s (%.1f s training), %.1f samples/s, best val loss %s%s\n",
                 static_cast<long long>(run.state.global_step), since(run_start), train_seconds,
                 train_seconds > 0 ? static_cast<double>(trained_samples) / train_seconds : 0.0,
                 std::isfinite(best) ? std::to_string(best).c_str() : "n/a",
                 skipped > 0 ? (", " + std::to_string(skipped) + " step(s) skipped (non-finite loss)").c_str() : "");
  }
  return k_exit_ok;
}

int inspect_checkpoint(const std::string& path) {
  const Checkpoint c = read_checkpoint(path);
  int64_t numel = 0;
  for (const auto& entry : c.tensors) numel += entry.second.numel();
  // One JSON line (an infinite best_val_loss, no validation yet, is null).
  const nlohmann::ordered_json j{{"model", c.state.model},
                                 {"epoch", c.state.epoch},
                                 {"next_batch", c.state.next_batch},
                                 {"global_step", c.state.global_step},
                                 {"global_batch", c.state.global_batch},
                                 {"world_size", c.state.world_size},
                                 {"best_val_loss", c.state.best_val_loss},
                                 {"optimizer", c.state.optimizer},
                                 {"tensors", c.tensors.size()},
                                 {"elements", numel}};
  std::printf("%s\n", j.dump().c_str());
  return 0;
}

int compare_checkpoints(const std::string& a, const std::string& b, double tolerance) {
  const Checkpoint ca = read_checkpoint(a), cb = read_checkpoint(b);
  double worst = 0.0;
  std::string worst_name;
  size_t compared = 0;
  for (const auto& entry : ca.tensors) {
    auto it = cb.tensors.find(entry.first);
    if (it == cb.tensors.end() || it->second.sizes() != entry.second.sizes())
      throw Error(b, "has no tensor '" + entry.first + "' of the shape in " + a, "compare checkpoints of one model");
    if (!entry.second.is_floating_point()) continue;
    const double diff =
        entry.second.numel() ? (entry.second.to(torch::kFloat64) - it->second.to(torch::kFloat64)).abs().max().item<double>() : 0.0;
    ++compared;
    if (diff > worst || worst_name.empty()) {
      worst = std::max(worst, diff);
      if (diff >= worst) worst_name = entry.first;
    }
  }
  std::printf("compared %zu tensors: max |a-b| = %.3g (%s), tolerance %.3g: %s\n", compared, worst,
              worst_name.c_str(), tolerance, worst <= tolerance ? "same" : "DIFFERENT");
  return worst <= tolerance ? 0 : 1;
}

}  // namespace hpctrain
