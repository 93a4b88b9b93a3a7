// The training run: see trainer.h.
#include "trainer.h"

#include <dlfcn.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <thread>

#include "atomic_file.h"
#include "checkpoint.h"
#include "cuda_graph.h"
#include "data.h"
#include "ddp.h"
#include "device.h"
#include "gpu_policy.h"
#include "metrics/records.h"
#include "metrics_log.h"
#include "models.h"
#include "optimizer.h"
#include "sampler.h"
#include "schedule.h"
#include "signals.h"
#include "step_policy.h"
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

struct Run {
  const TrainOptions& o;
  const DistEnv& env;
  torch::Device device{torch::kCPU};
  std::unique_ptr<Communicator> comm;
  DataSplit data;
  std::shared_ptr<TrainModel> model;
  std::unique_ptr<TrainOptimizer> optimizer;
  std::unique_ptr<GradientReducer> reducer;
  std::vector<torch::Tensor> buffers;
  BatchPlan batch;
  LrSchedule schedule;
  TrainState state;
  int64_t steps_per_epoch = 0;
  GpuRun gpu;                        // the GPU step's flags and what they apply to (gpu_policy.h)
  std::unique_ptr<StepGraph> graph;  // --cuda-graphs
  int64_t steps_this_process = 0;    // the graph's warm-up and capture count from here
  // The step's inputs and outputs: under --cuda-graphs static (the graph reads and writes these addresses).
  struct {
    torch::Tensor input, target;
    torch::Tensor flags;         // on the device: stop, save, loss factor (1, or NaN from the test hook)
    torch::Tensor host_flags;    // the same on the host (pinned for a GPU)
    torch::Tensor my_nonfinite;  // this rank's loss was not finite (written by the step)
  } step;
  int threads = 1;        // intra-op and BLAS threads of this rank
  bool openblas = false;  // the BLAS is OpenBLAS and got the same count
  bool rank0() const { return env.rank == 0; }
  std::string latest_path() const { return o.checkpoint_dir + "/latest.pt"; }
};

torch::Tensor to_device(const torch::Tensor& t, const Run& run) { return hpctrain::to_device(t, run.device, run.o.channels_last); }

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
    torch::Tensor out;
    {
      AutocastScope autocast(run.o.amp, run.device.type());
      out = run.model->forward(to_device(b.input, run));
    }
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
  run.optimizer->before_save();
  save_checkpoint(path, *run.model, run.optimizer->torch_optimizer(), run.state);
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

// --- setup, by concern: the rank's resources, the input checks, resume, model, optimizer, schedule, DDP ---

// Threads, device and the checks of everything that can be wrong with the input, before connecting, so that no
// rank waits for a peer that has already failed.
void configure_rank(Run& run) {
  const TrainOptions& o = run.o;
  run.threads = threads_per_rank(o.threads, available_cpus(), [](const char* name) { return std::getenv(name); });
  torch::set_num_threads(run.threads);
  run.openblas = set_blas_threads(run.threads);
  run.device = choose_device(o, run.env);
  run.gpu = GpuRun{run.device.is_cuda(), choose_backend(o, run.device), run.env.world_size, o.amp,
                   o.channels_last, o.cuda_graphs, o.optimizer_impl, o.on_nonfinite};
  check_gpu_flags(run.gpu);
  if (o.cuda_graphs) {
    if (run.gpu.backend == "nccl" && run.env.world_size > 1 && !nccl_can_be_captured(StepGraph::nccl_version()))
      throw Error("--cuda-graphs", "NCCL " + nccl_version_text(StepGraph::nccl_version()) +
                                       " cannot be captured in a CUDA graph (2.9.6 or later can)",
                  "use a PyTorch built with a newer NCCL or drop --cuda-graphs");
    for (const auto& [name, value] : nccl_capture_environment(run.gpu, [](const char* n) { return std::getenv(n); }))
      setenv(name.c_str(), value.c_str(), 1);  // read by ProcessGroupNCCL when it is built (connect)
    run.graph = std::make_unique<StepGraph>(run.device);
  }
  if (o.explicit_batch) plan_batch(o.global_batch, o.batch_size, o.base_batch, run.env.world_size);
  if (!o.resume_from.empty() && !std::filesystem::exists(o.resume_from))
    throw Error("--resume-from", o.resume_from + " does not exist", "pass an existing checkpoint or use --resume");
}

void connect(Run& run) {
  const std::string& backend = run.gpu.backend;
  run.data = load_data(run.o);
  run.comm = Communicator::connect(run.env, backend);
  // Polling only pays where the CPU does the collective (gloo); NCCL's wait just orders the CUDA streams.
  run.comm->set_spin_wait(std::chrono::microseconds(backend == "gloo" ? run.o.spin_wait_us : 0));
}

// The checkpoint to continue from (--resume, --resume-from), if any; it must hold the same model.
struct Resume {
  std::string path;  // empty: a fresh start
  Checkpoint checkpoint;
};

Resume read_resume_point(const Run& run) {
  const TrainOptions& o = run.o;
  Resume resume{o.resume_from, {}};
  if (o.resume && std::filesystem::exists(run.latest_path())) resume.path = run.latest_path();
  else if (o.resume && run.rank0()) std::fprintf(stdout, "no %s yet: starting from scratch\n", run.latest_path().c_str());
  if (resume.path.empty()) return resume;
  resume.checkpoint = read_checkpoint(resume.path);
  const std::string& saved = resume.checkpoint.state.model;
  if (!saved.empty() && saved != o.model)
    throw Error("--model", "is " + o.model + " but " + resume.path + " holds a " + saved, "pass --model " + saved);
  return resume;
}

// The batch (the checkpoint's global batch unless given; a different one is refused) and the steps per epoch.
void plan_batches(Run& run, const Resume& resume) {
  const TrainOptions& o = run.o;
  const int64_t saved_global = resume.checkpoint.state.global_batch;
  if (!o.explicit_batch && saved_global > 0) run.batch = plan_batch(saved_global, 0, o.base_batch, run.env.world_size);
  else run.batch = plan_batch(o.global_batch, o.batch_size, o.base_batch, run.env.world_size);
  if (saved_global > 0 && run.batch.global_batch != saved_global)
    throw Error("--global-batch-size", "is " + std::to_string(run.batch.global_batch) + " but " + resume.path +
                                           " was trained with " + std::to_string(saved_global),
                "resume with --global-batch-size " + std::to_string(saved_global));
  DistributedSampler sampler(run.data.train->size(), run.env.world_size, run.env.rank, o.shuffle, o.seed);
  run.steps_per_epoch = sampler.batches_per_epoch(run.batch.local_batch);
  if (run.steps_per_epoch == 0)
    throw Error("--batch-size", "per-rank batch " + std::to_string(run.batch.local_batch) + " exceeds the " +
                                    std::to_string(sampler.samples_per_rank()) + " samples each rank has",
                "use a smaller batch or more samples");
}

void build_model(Run& run) {
  const TrainOptions& o = run.o;
  ModelSpec spec = run.data.spec;
  spec.resnet_depth = o.resnet_depth;
  spec.resnet_width = o.resnet_width;
  spec.unet_width = o.unet_width;
  torch::manual_seed(o.seed);
  run.model = make_model(spec);
  run.model->to(run.device);
  apply_memory_format(*run.model, o.channels_last);
}

void build_optimizer(Run& run) {
  run.optimizer = std::make_unique<TrainOptimizer>(run.o, run.model->parameters(), choose_optimizer_impl(run.gpu));
}

// Weights, optimizer state, RNG and position from the checkpoint (a Python state dict brings weights only).
void restore(Run& run, const Resume& resume) {
  const TrainOptions& o = run.o;
  run.state.model = o.model;
  run.state.optimizer = o.optimizer;
  run.state.seed = o.seed;
  run.state.global_batch = run.batch.global_batch;
  run.state.world_size = run.env.world_size;
  if (resume.path.empty()) return;
  const Checkpoint& checkpoint = resume.checkpoint;
  load_model_state(*run.model, checkpoint, resume.path);
  if (checkpoint.state.optimizer == o.optimizer) {
    load_optimizer_state(run.optimizer->torch_optimizer(), checkpoint, run.device);
    run.optimizer->after_load();
  } else if (run.rank0() && !checkpoint.state.optimizer.empty())
    std::fprintf(stdout, "%s: optimizer was %s, now %s: its state starts fresh\n", resume.path.c_str(),
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
    std::fprintf(stdout, "resumed from %s at epoch %lld, step %lld\n", resume.path.c_str(),
                 static_cast<long long>(run.state.epoch + 1), static_cast<long long>(run.state.global_step));
}

void plan_schedule(Run& run) {
  const TrainOptions& o = run.o;
  LrScaling scaling = LrScaling::none;
  parse_lr_scaling(o.lr_scaling, &scaling);
  run.schedule.peak_lr = scaled_lr(o.lr, scaling, run.batch.global_batch, run.batch.base_batch);
  parse_lr_decay(o.lr_decay, &run.schedule.decay);
  run.schedule.min_lr = o.min_lr;
  run.schedule.warmup_steps = o.warmup_steps;
  run.schedule.total_steps = o.schedule_steps > 0 ? o.schedule_steps : o.epochs * run.steps_per_epoch;
}

// Rank 0's parameters and buffers everywhere, then the gradient buckets.
void start_ddp(Run& run) {
  std::vector<torch::Tensor> everything = run.model->parameters();
  for (auto& b : run.model->buffers()) {
    everything.push_back(b);
    run.buffers.push_back(b);
  }
  run.comm->broadcast(everything);
  const auto cap = static_cast<int64_t>(run.o.bucket_cap_mb * 1024 * 1024);
  run.reducer = std::make_unique<GradientReducer>(run.model->parameters(), run.comm.get(), cap,
                                                  std::min<int64_t>(cap, 1 << 20));
}

void prepare_checkpoint_dir(const Run& run) {
  if (!run.rank0() || run.o.checkpoint_dir.empty()) return;
  std::filesystem::create_directories(run.o.checkpoint_dir);
  remove_stale_temporaries(run.latest_path());
  remove_stale_temporaries(run.o.checkpoint_dir + "/best.pt");
}

void print_header(const Run& run) {
  if (!run.rank0()) return;
  const TrainOptions& o = run.o;
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
  if (run.device.is_cuda())
    std::fprintf(stdout, "  gpu: optimizer %s, amp %s, channels-last %s, cuda graphs %s\n",
                 run.optimizer->impl() == OptimizerImpl::foreach ? "foreach" : "loop", o.amp ? "bf16" : "off",
                 o.channels_last ? "on" : "off",
                 o.cuda_graphs ? ("after " + std::to_string(k_graph_warmup_steps) + " warm-up steps").c_str() : "off");
  std::fflush(stdout);
}

void setup(Run& run) {
  configure_rank(run);
  connect(run);
  const Resume resume = read_resume_point(run);
  plan_batches(run, resume);
  build_model(run);
  build_optimizer(run);
  restore(run, resume);
  plan_schedule(run);
  start_ddp(run);
  prepare_checkpoint_dir(run);
  print_header(run);
}

// --- the step: forward, backward with the bucketed allreduce, and the optimizer step if every rank agrees ---

// What every rank knows after a step's allreduce (the control slots' means).
struct StepResult {
  double loss = 0.0;          // mean over ranks
  bool nonfinite = false;     // some rank's loss was NaN or infinite
  bool stop = false;          // some rank got SIGUSR1/SIGTERM
  bool save = false;          // some rank got SIGUSR2
  torch::Tensor my_nonfinite; // this rank's own flag (on the device)
};

// The step's inputs on the device: the batch, and the flags (stop and save requests, the loss factor). Eager
// steps take fresh tensors; under --cuda-graphs they are copied into the static ones the graph reads.
void stage_step(Run& run, const Batch& b, bool poison) {
  auto& s = run.step;
  const float factor = poison ? std::numeric_limits<float>::quiet_NaN() : 1.0f;
  const float host[3] = {stop_requested() ? 1.0f : 0.0f, take_save_request() ? 1.0f : 0.0f, factor};
  if (!run.graph) {
    s.input = to_device(b.input, run);
    s.target = to_device(b.target, run);
    s.flags = torch::tensor({host[0], host[1], host[2]}, torch::kFloat32).to(run.device);
    return;
  }
  if (!s.input.defined()) {  // the first step: the static tensors take its shapes (every batch has them)
    s.input = to_device(b.input, run);
    s.target = to_device(b.target, run);
    s.host_flags = torch::zeros({3}, torch::kFloat32).pin_memory();
    s.flags = torch::zeros({3}, torch::TensorOptions().dtype(torch::kFloat32).device(run.device));
  } else {
    s.input.copy_(b.input.pin_memory(), /*non_blocking=*/true);
    s.target.copy_(b.target.pin_memory(), /*non_blocking=*/true);
  }
  std::copy(host, host + 3, s.host_flags.data_ptr<float>());  // the previous step's copy is done (read_step)
  s.flags.copy_(s.host_flags, /*non_blocking=*/true);
}

// The step's device work: forward under autocast, the loss, the control slots, backward with the bucketed
// allreduce, and (under --cuda-graphs, where nothing is decided on the host mid-step) the optimizer step.
// This is what a graph records, so it reads only run.step's tensors and host values that stay the same;
// `scale_loss`: multiply the loss by the flags' factor (the test hook's NaN; always under a graph).
void compute_step(Run& run, bool optimizer_step, bool scale_loss) {
  auto& s = run.step;
  if (run.o.broadcast_buffers) run.comm->broadcast(run.buffers);
  run.reducer->prepare();
  torch::Tensor out;
  {
    AutocastScope autocast(run.o.amp, run.device.type(), /*cache=*/!run.graph);
    out = run.model->forward(s.input);
  }
  torch::Tensor loss = run.model->loss(out.to(torch::kFloat32), s.target);
  torch::Tensor control = run.reducer->control();
  {
    torch::NoGradGuard no_grad;
    control[0].copy_(s.flags[0]);
    control[1].copy_(s.flags[1]);
  }
  if (scale_loss) loss = loss * s.flags[2];
  {
    torch::NoGradGuard no_grad;
    control[2].copy_(loss.detach());
    s.my_nonfinite = torch::isfinite(loss.detach()).logical_not();  // stays on the device: no sync here
    control[3].copy_(s.my_nonfinite);
  }
  loss.backward();
  run.reducer->finish();
  if (optimizer_step) run.optimizer->step();
}

// What every rank knows after the step (one device-to-host copy of the control slots).
StepResult read_step(Run& run) {
  const torch::Tensor flags = run.reducer->control().cpu();
  const float* f = flags.data_ptr<float>();
  StepResult result;
  result.stop = f[0] > 0.0f;
  result.save = f[1] > 0.0f;
  result.loss = f[2];
  result.nonfinite = f[3] > 0.0f || !std::isfinite(f[2]);
  result.my_nonfinite = run.step.my_nonfinite;
  return result;
}

// One step: eager, or a warm-up, the capture or a replay of the graph (gpu_policy.h's graph_phase). Returns
// whether the optimizer step was taken already (always under --cuda-graphs).
StepResult run_step(Run& run, const Batch& b, bool poison, bool* optimizer_stepped) {
  stage_step(run, b, poison);
  const GraphPhase phase = graph_phase(run.graph != nullptr, run.steps_this_process++);
  *optimizer_stepped = phase != GraphPhase::eager;
  switch (phase) {
    case GraphPhase::eager: compute_step(run, false, poison); break;
    case GraphPhase::warmup: run.graph->warmup([&] { compute_step(run, true, true); }); break;
    case GraphPhase::capture:
      run.graph->capture([&] { compute_step(run, true, true); });
      run.graph->replay();
      break;
    case GraphPhase::replay: run.graph->replay(); break;
  }
  return read_step(run);
}

// --- reporting: the --metrics file and rank 0's lines ---

class Reporter {
 public:
  explicit Reporter(const Run& run) : m_run(run), m_metrics(run.rank0() ? run.o.metrics_file : "") {}

  void run_start() {
    metrics::RunStart start;
    start.step = m_run.state.global_step;
    start.model = m_run.o.model;
    start.world_size = m_run.env.world_size;
    start.global_batch = m_run.batch.global_batch;
    start.on_nonfinite = m_run.o.on_nonfinite;
    start.time = unix_time();
    m_metrics.write(start);
  }

  void step(int64_t step_number, int64_t batch_index, double lr, const StepResult& r, StepAction action,
            const NonfiniteTracker& tracker, const std::vector<int>& bad_ranks, double step_s, double cpu_s) {
    m_trained_samples += m_run.batch.global_batch;
    m_train_seconds += step_s;
    ++m_window_steps;
    if (!m_run.rank0()) return;
    metrics::Step record;
    record.epoch = m_run.state.epoch + 1;
    record.step = step_number;
    record.loss = r.loss;
    record.lr = lr;
    record.samples_per_s = static_cast<double>(m_run.batch.global_batch) / step_s;
    record.step_time_s = step_s;
    record.allreduce_s = m_run.reducer->last_wait_seconds();
    record.cpu_s = cpu_s;
    record.time = unix_time();
    record.skipped = r.nonfinite && tracker.skips_steps();
    m_metrics.write(record);
    if (action == StepAction::skip)
      std::fprintf(stdout, "step %lld: non-finite loss on %s: optimizer step skipped (%lld in a row, %lld in all)\n",
                   static_cast<long long>(step_number), join_ranks(bad_ranks).c_str(),
                   static_cast<long long>(tracker.in_a_row()), static_cast<long long>(tracker.skipped()));
    if (m_run.state.global_step % m_run.o.log_every == 0 && !r.nonfinite) {
      std::fprintf(stdout, "epoch %lld step %lld/%lld loss %.5f lr %.3e samples/s %.1f\n",
                   static_cast<long long>(m_run.state.epoch + 1), static_cast<long long>(batch_index + 1),
                   static_cast<long long>(m_run.steps_per_epoch), r.loss, lr,
                   static_cast<double>(m_window_steps * m_run.batch.global_batch) / since(m_window_start));
      std::fflush(stdout);
      m_window_start = Clock::now();
      m_window_steps = 0;
    }
  }

  void validation(double val_loss, double seconds) {
    metrics::Validation v;
    v.epoch = m_run.state.epoch + 1;
    v.step = m_run.state.global_step;
    v.val_loss = val_loss;
    v.time_s = seconds;
    v.time = unix_time();
    m_metrics.write(v);
  }

  // One line, rank 0: the step, the ranks, the last finite loss; nothing was saved.
  void nonfinite_end(metrics::RunEnd end, const NonfiniteTracker& tracker) {
    if (!m_run.rank0()) return;
    m_metrics.write(end);
    const TrainOptions& o = m_run.o;
    char last[96] = "no finite loss before it";
    if (tracker.last_finite_step())
      std::snprintf(last, sizeof last, "last finite loss %.6g at step %lld", tracker.last_finite_loss(),
                    static_cast<long long>(*tracker.last_finite_step()));
    const bool skip = tracker.skips_steps();
    const std::string how = skip ? "non-finite loss for " + std::to_string(tracker.in_a_row()) +
                                       " steps in a row (--max-skipped-steps " + std::to_string(o.max_skipped_steps) + ")"
                                 : "non-finite loss";
    const int64_t skipped = tracker.skipped();
    std::fprintf(stderr,
                 "hpclaunch-train: error: step %lld: %s on %s of %d (%s); stopped without saving, %s; exit %d%s; %s\n",
                 static_cast<long long>(*end.nonfinite_step), how.c_str(), join_ranks(end.nonfinite_ranks).c_str(),
                 m_run.env.world_size, last,
                 o.checkpoint_dir.empty() ? "no --checkpoint-dir" : "the checkpoints stay the last good ones",
                 k_exit_nonfinite, skipped > 0 ? (", " + std::to_string(skipped) + " step(s) skipped").c_str() : "",
                 skip ? "lower --lr, or allow more with --max-skipped-steps"
                      : "lower --lr, or skip such steps with --on-nonfinite skip-step (--resume starts "
                        "from the checkpoint)");
    std::fflush(stderr);
  }

  // Said before the barrier: once one rank exits 99, `srun --kill-on-bad-exit` may end the others.
  void stopped_end(const metrics::RunEnd& end) {
    if (!m_run.rank0()) return;
    m_metrics.write(end);
    std::fprintf(stdout, "stopped by signal at step %lld; checkpoint %s; exit %d (requeue)\n",
                 static_cast<long long>(m_run.state.global_step),
                 m_run.o.checkpoint_dir.empty() ? "not written (no --checkpoint-dir)" : m_run.latest_path().c_str(),
                 k_exit_requeue);
    std::fflush(stdout);
  }

  void replicas(double deviation) {
    if (m_run.rank0() && m_run.env.world_size > 1)
      std::fprintf(stdout, "replicas: max parameter deviation between ranks %.3g%s\n", deviation,
                   deviation == 0.0 ? " (identical)" : "");
  }

  void done_end(const metrics::RunEnd& end, int64_t skipped) {
    if (!m_run.rank0()) return;
    m_metrics.write(end);
    const double best = m_run.state.best_val_loss;
    std::fprintf(stdout, "done: %lld steps in %.1f s (%.1f s training), %.1f samples/s, best val loss %s%s\n",
                 static_cast<long long>(m_run.state.global_step), since(m_start), m_train_seconds,
                 m_train_seconds > 0 ? static_cast<double>(m_trained_samples) / m_train_seconds : 0.0,
                 std::isfinite(best) ? std::to_string(best).c_str() : "n/a",
                 skipped > 0 ? (", " + std::to_string(skipped) + " step(s) skipped (non-finite loss)").c_str() : "");
  }

 private:
  const Run& m_run;
  MetricsFile m_metrics;
  Clock::time_point m_start = Clock::now();
  Clock::time_point m_window_start = Clock::now();
  int64_t m_window_steps = 0;
  int64_t m_trained_samples = 0;
  double m_train_seconds = 0.0;
};

// Records a killed run wrote after its last checkpoint: those steps are trained again now.
void trim_metrics_on_resume(const Run& run) {
  const TrainOptions& o = run.o;
  const bool resuming = o.resume || !o.resume_from.empty();
  if (!run.rank0() || !resuming || o.metrics_file.empty()) return;
  const int dropped = truncate_metrics_file(o.metrics_file, run.state.global_step);
  if (dropped > 0)
    std::fprintf(stdout, "%s: dropped %d record(s) after step %lld, the checkpoint's\n", o.metrics_file.c_str(),
                 dropped, static_cast<long long>(run.state.global_step));
}

// --- the loop: epochs of steps, the checkpoint policy, validation, and how the run ends ---

class Loop {
 public:
  Loop(Run& run, Reporter& report)
      : m_run(run), m_report(report), m_tracker(run.o.on_nonfinite == "skip-step", run.o.max_skipped_steps) {}

  int run() {
    const TrainOptions& o = m_run.o;
    DistributedSampler sampler(m_run.data.train->size(), m_run.env.world_size, m_run.env.rank, o.shuffle, o.seed);
    while (m_run.state.epoch < o.epochs && !m_done) {
      const std::vector<int64_t> shard = sampler.shard(m_run.state.epoch);
      while (m_run.state.next_batch < m_run.steps_per_epoch && !m_done) {
        if (o.max_steps > 0 && m_run.state.global_step >= o.max_steps) m_done = true;
        else step(shard);
      }
      if (m_done) break;
      end_epoch();
      ++m_run.state.epoch;
      m_run.state.next_batch = 0;
      save(m_run, m_run.latest_path());
    }
    return finish();
  }

 private:
  void step(const std::vector<int64_t>& shard) {
    const TrainOptions& o = m_run.o;
    const auto step_start = Clock::now();
    const double cpu_start = process_cpu_seconds();
    const int64_t batch_index = m_run.state.next_batch;
    const int64_t step_number = m_run.state.global_step + 1;
    const double lr = m_run.schedule.at(m_run.state.global_step);
    m_run.optimizer->set_lr(lr);
    const Batch b =
        m_run.data.train->gather(DistributedSampler::batch(shard, batch_index, m_run.batch.local_batch));
    bool stepped = false;
    const StepResult r = run_step(m_run, b, o.hooks.nonfinite.applies(m_run.env.rank, step_number), &stepped);
    const StepAction action = m_tracker.record(step_number, r.nonfinite, r.loss);
    std::vector<int> bad_ranks;
    if (action == StepAction::take && !stepped) m_run.optimizer->step();
    else bad_ranks = nonfinite_ranks(m_run, r.my_nonfinite.cpu().item<bool>());
    if (action == StepAction::stop) {
      m_diverged.status = "nonfinite";
      m_diverged.nonfinite_step = step_number;
      m_diverged.nonfinite_ranks = bad_ranks;
    } else {
      ++m_run.state.global_step;
      ++m_run.state.next_batch;  // from here on the state is the position to continue from
    }
    m_validated_last = false;
    m_report.step(step_number, batch_index, lr, r, action, m_tracker, bad_ranks, since(step_start),
                  process_cpu_seconds() - cpu_start);
    if (action == StepAction::stop) {
      m_done = true;
      return;
    }
    if (save_latest_after_step(r.stop, r.save, m_run.state.global_step, o.checkpoint_every))
      save(m_run, m_run.latest_path());
    if (r.stop) {
      m_stopped = m_done = true;
      return;
    }
    if (o.hooks.step_sleep_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(o.hooks.step_sleep_ms));
  }

  void end_epoch() {
    if (m_run.o.validate) {
      const auto start = Clock::now();
      const double val = validate(m_run);
      m_report.validation(val, since(start));
      if (val < m_run.state.best_val_loss) {
        m_run.state.best_val_loss = val;
        save(m_run, m_run.o.checkpoint_dir + "/best.pt");
      }
    }
    m_validated_last = true;
  }

  int finish() {
    metrics::RunEnd end = m_diverged;
    end.step = m_run.state.global_step;
    end.skipped_steps = m_tracker.skipped();
    end.time = unix_time();
    if (end.status == "nonfinite") {
      end.exit_code = k_exit_nonfinite;
      end.last_finite_step = m_tracker.last_finite_step();
      end.last_finite_loss = m_tracker.last_finite_loss();
      m_report.nonfinite_end(end, m_tracker);
      return k_exit_nonfinite;
    }
    if (m_stopped) {
      end.status = "stopped";
      end.exit_code = k_exit_requeue;
      m_report.stopped_end(end);
      m_run.comm->barrier();  // everyone leaves after rank 0's checkpoint is on disk
      return k_exit_requeue;
    }
    if (!m_validated_last && m_run.state.global_step > 0) {
      end_epoch();
      save(m_run, m_run.latest_path());
    }
    m_report.replicas(replica_deviation(m_run));
    end.status = "done";
    end.exit_code = k_exit_ok;
    end.time = unix_time();
    m_report.done_end(end, m_tracker.skipped());
    return k_exit_ok;
  }

  Run& m_run;
  Reporter& m_report;
  NonfiniteTracker m_tracker;
  metrics::RunEnd m_diverged;  // status "nonfinite" once the run must stop
  bool m_done = false, m_stopped = false, m_validated_last = false;
};

}  // namespace

int run_training(const TrainOptions& o, const DistEnv& env) {
  install_signal_handlers();  // main() did it already; here for callers that are not main()
  Run run{o, env};
  setup(run);
  trim_metrics_on_resume(run);
  Reporter report(run);
  report.run_start();
  return Loop(run, report).run();
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
