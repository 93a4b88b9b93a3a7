// Reporting a run: see reporter.h.
#include "reporter.h"

#include <chrono>
#include <cmath>
#include <cstdio>

namespace hpctrain {
namespace {

namespace metrics = hpclaunch::metrics;

std::string join_ranks(const std::vector<int>& ranks) {
  std::string out;
  for (int r : ranks) out += (out.empty() ? "" : ", ") + std::to_string(r);
  return (ranks.size() == 1 ? "rank " : "ranks ") + out;
}

}  // namespace

double unix_time() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

Reporter::Reporter(const Run& run) : m_run(run), m_writer(run.rank0() ? run.o.metrics_file : "") {}

void Reporter::run_start() {
  metrics::RunStart start;
  start.step = m_run.state.global_step;
  start.model = m_run.o.model;
  start.world_size = m_run.env.world_size;
  start.global_batch = m_run.batch.global_batch;
  start.on_nonfinite = m_run.o.on_nonfinite;
  start.time = unix_time();
  m_writer.write(start);
}

void Reporter::step(int64_t step_number, int64_t batch_index, double lr, const StepResult& r, StepAction action,
                    const NonfiniteTracker& tracker, const std::vector<int>& bad_ranks, const StepTimes& times) {
  const double step_s = times.wall_s;
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
  record.data_wait_s = times.data_wait_s;
  record.cpu_s = times.cpu_s;
  record.time = unix_time();
  record.skipped = r.nonfinite && tracker.skips_steps();
  m_writer.write(record);
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

void Reporter::validation(double val_loss, double seconds) {
  metrics::Validation v;
  v.epoch = m_run.state.epoch + 1;
  v.step = m_run.state.global_step;
  v.val_loss = val_loss;
  v.time_s = seconds;
  v.time = unix_time();
  m_writer.write(v);
}

void Reporter::nonfinite_end(metrics::RunEnd end, const NonfiniteTracker& tracker) {
  if (!m_run.rank0()) return;
  m_writer.write(end);
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

void Reporter::stopped_end(const metrics::RunEnd& end) {
  if (!m_run.rank0()) return;
  m_writer.write(end);
  std::fprintf(stdout, "stopped by signal at step %lld; checkpoint %s; exit %d (requeue)\n",
               static_cast<long long>(m_run.state.global_step),
               m_run.o.checkpoint_dir.empty() ? "not written (no --checkpoint-dir)" : m_run.latest_path().c_str(),
               k_exit_requeue);
  std::fflush(stdout);
}

void Reporter::replicas(double deviation) {
  if (m_run.rank0() && m_run.env.world_size > 1)
    std::fprintf(stdout, "replicas: max parameter deviation between ranks %.3g%s\n", deviation,
                 deviation == 0.0 ? " (identical)" : "");
}

void Reporter::done_end(const metrics::RunEnd& end, int64_t skipped) {
  if (!m_run.rank0()) return;
  m_writer.write(end);
  const double best = m_run.state.best_val_loss;
  std::fprintf(stdout, "done: %lld steps in %.1f s (%.1f s training), %.1f samples/s, best val loss %s%s\n",
               static_cast<long long>(m_run.state.global_step), since(m_start), m_train_seconds,
               m_train_seconds > 0 ? static_cast<double>(m_trained_samples) / m_train_seconds : 0.0,
               std::isfinite(best) ? std::to_string(best).c_str() : "n/a",
               skipped > 0 ? (", " + std::to_string(skipped) + " step(s) skipped (non-finite loss)").c_str() : "");
}

void trim_metrics_on_resume(const Run& run) {
  const TrainOptions& o = run.o;
  const bool resuming = o.resume || !o.resume_from.empty();
  if (!run.rank0() || !resuming || o.metrics_file.empty()) return;
  const int dropped = truncate_metrics_file(o.metrics_file, run.state.global_step);
  if (dropped > 0)
    std::fprintf(stdout, "%s: dropped %d record(s) after step %lld, the checkpoint's\n", o.metrics_file.c_str(),
                 dropped, static_cast<long long>(run.state.global_step));
}

}  // namespace hpctrain
