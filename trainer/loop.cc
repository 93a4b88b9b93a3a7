// The loop: see loop.h.
#include "loop.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <thread>

#include "sampler.h"
#include "progress_file.h"
#include "step.h"
#include "step_policy.h"
#include "util/error.h"

namespace hpctrain {
namespace {

namespace metrics = hpclaunch::metrics;

// CPU time of the whole process (every thread, gloo's included), for load-independent efficiency numbers.
double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
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
    const Batch b = model_batch(run.data.val->gather({shard.begin() + static_cast<std::ptrdiff_t>(begin),
                                                      shard.begin() + static_cast<std::ptrdiff_t>(end)}),
                                run);
    torch::Tensor out;
    {
      AutocastScope autocast(run.o.amp, run.device.type());
      out = run.model->forward(b.input);
    }
    const double n = static_cast<double>(end - begin);
    sum += run.model->loss(out.to(torch::kFloat32), b.target).item<double>() * n;
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
void save_latest(Run& run, const std::string& path) {
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
std::vector<int> gather_nonfinite_ranks(Run& run, bool mine) {
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

// --check-batches: each batch as the loader put it on the device, against the batch the sampler names for that
// step, gathered again on the host from the data set (not through the loader's buffers, thread or copies). A
// wrong or stale batch still trains (a falling loss hides it); here the first one ends the run.
class BatchCheck {
 public:
  explicit BatchCheck(const Run& run) : m_sampler(train_sampler(run)) {}

  void check(const Run& run, const Batch& got, int64_t step_number) {
    const int64_t epoch = run.state.epoch, batch = run.state.next_batch;
    if (epoch != m_epoch) {
      m_shard = m_sampler.shard(epoch);
      m_epoch = epoch;
    }
    const Batch want = run.data.train->gather(DistributedSampler::batch(m_shard, batch, run.batch.local_batch));
    const int64_t expected = batch_checksum(want), seen = batch_checksum(got);
    if (seen == expected) return;
    throw hpclaunch::failure(
        "--check-batches",
        "step " + std::to_string(step_number) + " (epoch " + std::to_string(epoch + 1) + ", batch " +
            std::to_string(batch + 1) + ") on rank " + std::to_string(run.env.rank) + ": the batch on " +
            got.input.device().str() + " has checksum " + std::to_string(seen) + ", the sampler's batch " +
            std::to_string(expected),
        "the input path (loader.h) handed a wrong or stale batch");
  }

 private:
  DistributedSampler m_sampler;
  std::vector<int64_t> m_shard;
  int64_t m_epoch = -1;
};

class Loop {
 public:
  Loop(Run& run, Reporter& report)
      : m_run(run), m_report(report), m_tracker(run.o.on_nonfinite == "skip-step", run.o.max_skipped_steps) {
    if (run.o.check_batches) m_check = std::make_unique<BatchCheck>(run);
  }

  int run() {
    const TrainOptions& o = m_run.o;
    while (m_run.state.epoch < o.epochs && !m_done) {
      while (m_run.state.next_batch < m_run.steps_per_epoch && !m_done) {
        if (o.max_steps > 0 && m_run.state.global_step >= o.max_steps) m_done = true;
        else step();
      }
      if (m_done) break;
      end_epoch();
      ++m_run.state.epoch;
      m_run.state.next_batch = 0;
      save_latest(m_run, m_run.latest_path());
    }
    return finish();
  }

 private:
  void step() {
    const TrainOptions& o = m_run.o;
    const auto step_start = Clock::now();
    const double cpu_start = process_cpu_seconds();
    report_pending(step_start, cpu_start);  // the previous step's time ends where this one starts
    const int64_t batch_index = m_run.state.next_batch;
    const int64_t step_number = m_run.state.global_step + 1;
    const double lr = m_run.schedule.at(m_run.state.global_step);
    m_run.optimizer->set_lr(lr);
    const auto wait_start = Clock::now();
    const Batch loaded = m_run.loader->next();  // batch `batch_index` of the epoch (setup.cc)
    const double data_wait_s = since(wait_start);
    if (m_check) m_check->check(m_run, loaded, step_number);
    const Batch b = model_batch(loaded, m_run);
    bool stepped = false;
    const StepResult r = run_step(m_run, b, o.hooks.nonfinite.applies(m_run.env.rank, step_number), &stepped);
    const StepAction action = m_tracker.record(step_number, r.nonfinite, r.loss);
    const AfterStep after = after_step(action, stepped);
    std::vector<int> bad_ranks;
    if (after.optimizer_step) m_run.optimizer->step();
    if (after.gather_nonfinite_ranks) bad_ranks = gather_nonfinite_ranks(m_run, r.my_nonfinite.cpu().item<bool>());
    if (action == StepAction::stop) {
      m_diverged.status = "nonfinite";
      m_diverged.nonfinite_step = step_number;
      m_diverged.nonfinite_ranks = bad_ranks;
    } else {
      ++m_run.state.global_step;
      ++m_run.state.next_batch;  // from here on the state is the position to continue from
      m_progress.step(m_run.state.global_step);
    }
    m_validated_last = false;
    m_pending = PendingStep{step_number, batch_index, lr, r, action, bad_ranks, step_start, cpu_start, data_wait_s};
    if (action == StepAction::stop) {
      m_done = true;
      return;
    }
    if (save_latest_after_step(r.stop, r.save, m_run.state.global_step, o.checkpoint_every)) {
      // The step's record before the checkpoint that holds the step: the run resumes after it, so a kill between
      // the save and the next step's start would lose the record for good (t0490's soak saw it). Its time then
      // ends here, without the save's.
      report_pending(Clock::now(), process_cpu_seconds());
      save_latest(m_run, m_run.latest_path());
    }
    if (r.stop) {
      m_stopped = m_done = true;
      return;
    }
    if (o.hooks.step_sleep_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(o.hooks.step_sleep_ms));
  }

  // A step's record is written once its time is known: from its start to the next step's start (the metrics
  // write and anything else between included, as bench/trainer/ddp_train.py times a step), to the start of the
  // latest.pt that holds it, or to the end of the epoch or of the run (validation and the final reports are not a
  // step's). `end`: that moment, once read, so that no time falls into two steps (the record's write is the next
  // step's).
  void report_pending(Clock::time_point end, double cpu_end) {
    if (!m_pending) return;
    const PendingStep& p = *m_pending;
    m_report.step(p.step_number, p.batch_index, p.lr, p.result, p.action, m_tracker, p.bad_ranks,
                  StepTimes{std::chrono::duration<double>(end - p.start).count(), cpu_end - p.cpu_start,
                            p.data_wait_s});
    m_pending.reset();
  }

  void end_epoch() {
    report_pending(Clock::now(), process_cpu_seconds());
    if (m_run.o.validate) {
      const auto start = Clock::now();
      const double val = validate(m_run);
      m_report.validation(val, since(start));
      if (val < m_run.state.best_val_loss) {
        m_run.state.best_val_loss = val;
        save_latest(m_run, m_run.o.checkpoint_dir + "/best.pt");
      }
    }
    m_validated_last = true;
  }

  int finish() {
    report_pending(Clock::now(), process_cpu_seconds());
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
      save_latest(m_run, m_run.latest_path());
    }
    m_report.replicas(replica_deviation(m_run));
    end.status = "done";
    end.exit_code = k_exit_ok;
    end.time = unix_time();
    m_report.done_end(end, m_tracker.skipped());
    return k_exit_ok;
  }

  // A step done whose record waits for its time (report_pending).
  struct PendingStep {
    int64_t step_number, batch_index;
    double lr;
    StepResult result;
    StepAction action;
    std::vector<int> bad_ranks;
    Clock::time_point start;
    double cpu_start;
    double data_wait_s;  // in BatchLoader::next
  };

  Run& m_run;
  Reporter& m_report;
  NonfiniteTracker m_tracker;
  std::optional<PendingStep> m_pending;
  std::unique_ptr<BatchCheck> m_check;  // --check-batches
  ProgressFile m_progress{std::getenv("HPCLAUNCH_PROGRESS_FILE")};  // the agent's hang watch
  metrics::RunEnd m_diverged;  // status "nonfinite" once the run must stop
  bool m_done = false, m_stopped = false, m_validated_last = false;
};

}  // namespace

int run_loop(Run& run, Reporter& report) { return Loop(run, report).run(); }

}  // namespace hpctrain
