// Setting up a run, by concern: the rank's resources and the input checks, connecting, the resume point, the batch
// plan, model, optimizer, restored state, schedule and DDP (see run.h).
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <torch/version.h>

#include "atomic_file.h"
#include "run.h"
#include "sampler.h"
#include "util/error.h"

namespace hpctrain {
namespace {

using hpclaunch::Error;

torch::Device choose_device(const TrainOptions& o, const DistEnv& env) {
  const bool cuda = torch::cuda::is_available();
  if (o.device == "cuda" && !cuda)
    throw Error("--device", "cuda requested but no CUDA device is visible", "use --device cpu or run on a GPU node");
  if (o.device == "cpu" || !cuda) return torch::Device(torch::kCPU);
  const int count = static_cast<int>(torch::cuda::device_count());
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(env.local_rank % count));
}

// Threads, device and the checks of everything that can be wrong with the input, before connecting, so that no
// rank waits for a peer that has already failed.
void configure_rank(Run& run) {
  const TrainOptions& o = run.o;
  run.threads = threads_per_rank(o.threads, available_cpus(), [](const char* name) { return std::getenv(name); });
  torch::set_num_threads(run.threads);
  run.openblas = set_blas_threads(run.threads);
  run.device = choose_device(o, run.env);
  const std::string backend = choose_backend(o.backend, run.device.is_cuda(), run.env.world_size,
                                             BuiltBackends{compat::k_have_gloo, compat::k_have_nccl});
  run.gpu = GpuRun{run.device.is_cuda(), backend, run.env.world_size, o.amp,
                   o.channels_last, o.cuda_graphs, o.optimizer_impl, o.on_nonfinite};
  check_gpu_flags(run.gpu);
  if (o.cuda_graphs) {
    if (run.gpu.backend == "nccl" && run.env.world_size > 1 && !nccl_can_be_captured(StepGraph::nccl_version()))
      throw Error("--cuda-graphs", "NCCL " + nccl_version_text(StepGraph::nccl_version()) +
                                       " cannot be captured in a CUDA graph (2.9.6 or later can)",
                  "use a PyTorch built with a newer NCCL or drop --cuda-graphs");
    const bool new_name = TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 2);
    for (const auto& [name, value] :
         nccl_capture_environment(run.gpu, [](const char* n) { return std::getenv(n); }, new_name))
      setenv(name.c_str(), value.c_str(), 1);  // read by ProcessGroupNCCL when it is built (connect)
    run.graph = std::make_unique<StepGraph>(run.device);
  }
  if (o.explicit_batch) plan_batch(o.global_batch, o.batch_size, o.base_batch, run.env.world_size);
  if (!o.resume_from.empty() && !std::filesystem::exists(o.resume_from))
    throw Error("--resume-from", o.resume_from + " does not exist", "pass an existing checkpoint or use --resume");
}

void connect_process_group(Run& run) {
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
  const auto make_reducer = [&] {
    run.reducer = std::make_unique<GradientReducer>(run.model->parameters(), run.comm.get(), cap,
                                                    std::min<int64_t>(cap, 1 << 20));
  };
  // Under --cuda-graphs its hooks must run on the capture's stream (cuda_graph.h), its buckets made before it.
  if (run.graph) run.graph->on_side_stream(make_reducer);
  else make_reducer();
}

// The training batches from the position the run starts at (loader.h): run ahead by a thread into pinned
// buffers on a GPU, gathered when asked on the CPU.
void start_loader(Run& run) {
  const TrainOptions& o = run.o;
  BatchSequence sequence{train_sampler(run), run.batch.local_batch, run.steps_per_epoch, o.epochs, run.state.epoch,
                         run.state.next_batch};
  if (o.hooks.stale_batch_step > 0) sequence.stale = o.hooks.stale_batch_step - (run.state.global_step + 1);
  sequence.resident = o.hooks.resident_batch;
  const bool gpu = run.device.is_cuda();
  run.loader =
      std::make_unique<BatchLoader>(*run.data.train, std::move(sequence), run.device, gpu ? 3 : 1, gpu, run.threads);
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

}  // namespace

void setup(Run& run) {
  configure_rank(run);
  connect_process_group(run);
  const Resume resume = read_resume_point(run);
  plan_batches(run, resume);
  build_model(run);
  build_optimizer(run);
  restore(run, resume);
  plan_schedule(run);
  start_ddp(run);
  start_loader(run);
  prepare_checkpoint_dir(run);
  print_header(run);
}

}  // namespace hpctrain
