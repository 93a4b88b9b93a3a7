// One training step: see step.h.
#include "step.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "signals.h"

namespace hpctrain {
namespace {

// The step's inputs on the device: the batch (model_batch's), and the flags (stop and save requests, the loss
// factor). Eager steps read the batch as it is; under --cuda-graphs it is copied into the static tensors the graph
// reads. The flags go from a page-locked buffer without a host wait, in both modes: the step's only sync stays
// read_step's.
void stage_step(Run& run, const Batch& b, bool poison) {
  auto& s = run.step;
  const float factor = poison ? std::numeric_limits<float>::quiet_NaN() : 1.0f;
  const float host[3] = {stop_requested() ? 1.0f : 0.0f, take_save_request() ? 1.0f : 0.0f, factor};
  if (!s.flags.defined()) {
    s.host_flags = torch::zeros({3}, torch::kFloat32);
    if (run.device.is_cuda()) s.host_flags = s.host_flags.pin_memory();
    s.flags = torch::zeros({3}, torch::TensorOptions().dtype(torch::kFloat32).device(run.device));
  }
  if (!run.graph) {
    s.input = b.input;
    s.target = b.target;
  } else if (!s.input.defined()) {  // the first step: the static tensors take its shapes (every batch has them)
    s.input = b.input.clone();
    s.target = b.target.is_same(b.input) ? s.input : b.target.clone();
  } else {  // on the device, in stream order after the loader's copy (BatchLoader::next)
    s.input.copy_(b.input, /*non_blocking=*/true);
    if (!s.target.is_same(s.input)) s.target.copy_(b.target, /*non_blocking=*/true);
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

}  // namespace

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

}  // namespace hpctrain
