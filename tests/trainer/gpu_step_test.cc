// The GPU step's Torch parts that run on the CPU too: the autocast scope, the foreach
// optimizer against torch::optim (and checkpoints between the two), channels-last parameters and their
// gradient buckets. What only a GPU runs (pinned copies, CUDA graphs, NCCL) is not tested here.
#include <doctest/doctest.h>

#include <ATen/autocast_mode.h>

#include <sstream>

#include "checkpoint.h"
#include "ddp.h"
#include "device.h"
#include "models.h"
#include "optimizer.h"
#include "poison_allocator.h"

using namespace hpctrain;

namespace {

// Parameters of a few shapes with fixed gradients per step, stepped by one optimizer.
std::vector<torch::Tensor> make_params() {
  torch::manual_seed(7);
  return {torch::randn({8, 5}).requires_grad_(), torch::randn({5}).requires_grad_(),
          torch::randn({3, 2, 3, 3}).requires_grad_()};
}

void set_grads(std::vector<torch::Tensor>& params, int step) {
  torch::manual_seed(100 + step);
  for (auto& p : params) p.mutable_grad() = torch::randn_like(p);
}

double max_diff(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, (a[i] - b[i]).abs().max().item<double>());
  return worst;
}

// The same 6 steps (learning rate changing each step) with both implementations; the largest difference.
double loop_vs_foreach(const TrainOptions& o) {
  auto a = make_params(), b = make_params();
  TrainOptimizer loop(o, a, OptimizerImpl::loop), foreach(o, b, OptimizerImpl::foreach);
  for (int step = 0; step < 6; ++step) {
    set_grads(a, step);
    set_grads(b, step);
    loop.set_lr(o.lr * (1.0 + step) / 6);
    foreach.set_lr(o.lr * (1.0 + step) / 6);
    loop.step();
    foreach.step();
  }
  return max_diff(a, b);
}

}  // namespace

TEST_SUITE_BEGIN("GpuStep");

TEST_CASE("autocast scope: bf16 inside, a weight changed in place is seen by the next forward, settings restored") {
  torch::manual_seed(1);
  torch::nn::Linear linear(16, 16);
  const torch::Tensor x = torch::randn({4, 16});
  auto forward = [&] {
    AutocastScope autocast(true, torch::kCPU);
    return linear->forward(x);
  };
  const torch::Tensor first = forward();
  CHECK((first.scalar_type() == torch::kBFloat16));
  {
    torch::NoGradGuard no_grad;
    linear->weight.mul_(-1);  // what an optimizer step does: in place, same tensor
  }
  const torch::Tensor second = forward().to(torch::kFloat32);
  const torch::Tensor expected = torch::nn::functional::linear(x, linear->weight, linear->bias);
  CHECK((second - expected).abs().max().item<double>() < 0.1);  // bfloat16's precision
  CHECK_FALSE(autocast_enabled(torch::kCPU));  // the previous setting is back
}

TEST_CASE("foreach Adam follows torch::optim::Adam (with weight decay, a changing learning rate)") {
  TrainOptions o;
  o.optimizer = "adam";
  o.lr = 1e-2;
  CHECK(loop_vs_foreach(o) < 1e-6);
  o.weight_decay = 0.1;
  CHECK(loop_vs_foreach(o) < 1e-6);
}

TEST_CASE("foreach SGD follows torch::optim::SGD (momentum, weight decay, none)") {
  TrainOptions o;
  o.optimizer = "sgd";
  o.lr = 0.1;
  o.momentum = 0.9;
  CHECK(loop_vs_foreach(o) < 1e-6);
  o.weight_decay = 0.01;
  CHECK(loop_vs_foreach(o) < 1e-6);
  o.momentum = 0;
  CHECK(loop_vs_foreach(o) < 1e-6);
}

TEST_CASE("checkpoints: a foreach optimizer's state resumes under loop and the reverse, step count included") {
  TrainOptions o;
  o.lr = 1e-2;
  auto a = make_params(), b = make_params();
  TrainOptimizer foreach(o, a, OptimizerImpl::foreach);
  TrainOptimizer loop(o, b, OptimizerImpl::loop);
  for (int step = 0; step < 3; ++step) {
    set_grads(a, step);
    set_grads(b, step);
    foreach.step();
    loop.step();
  }
  // Save the foreach one, load it into a loop optimizer over copies of its parameters, and go on with both.
  foreach.before_save();
  torch::serialize::OutputArchive out;
  foreach.torch_optimizer().save(out);
  std::ostringstream bytes;
  out.save_to(bytes);
  std::vector<torch::Tensor> c;
  for (const auto& p : a) c.push_back(p.detach().clone().requires_grad_());
  TrainOptimizer resumed(o, c, OptimizerImpl::loop);
  torch::serialize::InputArchive in;
  const std::string data = bytes.str();
  in.load_from(data.data(), data.size());
  resumed.torch_optimizer().load(in);
  resumed.after_load();
  for (int step = 3; step < 6; ++step) {
    set_grads(a, step);
    set_grads(b, step);
    set_grads(c, step);
    foreach.step();
    loop.step();
    resumed.step();
  }
  CHECK(max_diff(a, c) < 1e-6);
  CHECK(max_diff(a, b) < 1e-6);
}

TEST_CASE("channels-last: 4-d and 5-d weights change format; gradient buckets keep their strides") {
  ModelSpec spec;
  spec.name = "resnet";
  spec.resnet_depth = 10;
  spec.resnet_width = 4;
  spec.num_classes = 3;
  auto resnet = make_model(spec);
  apply_memory_format(*resnet, true);
  int convs = 0;
  for (const auto& p : resnet->parameters())
    if (p.dim() == 4) convs += p.is_contiguous(torch::MemoryFormat::ChannelsLast) ? 1 : -1000;
  CHECK(convs > 0);
  spec.name = "unet3d";
  spec.unet_width = 2;
  auto unet = make_model(spec);
  apply_memory_format(*unet, true);
  for (const auto& p : unet->parameters())
    if (p.dim() == 5) CHECK(p.is_contiguous(torch::MemoryFormat::ChannelsLast3d));

  // One backward through the reducer (a world of one): each .grad is its bucket view, with the weight's strides,
  // and holds exactly the gradient autograd computed for it in that same backward (captured by a hook on the
  // parameter before AccumulateGrad adds it to the zeroed bucket: 0 + g is g, bit for bit).
  // This used to compare with a second, plain backward, and on some loaded machines differed by 0.055 in 2 runs
  // of 6 (LibTorch 2.6 only, never alone). Two backward passes of LibTorch on the CPU need not agree: a max-pool
  // or ReLU near a tie can take the other side when a threaded reduction adds in another order, and the model's
  // weights came from whatever random state the earlier test cases left. The same backward cannot differ so.
  // Every new allocation is NaN until written (poison_allocator.h): a bucket or a gradient read before it is
  // written fails here on any machine, not only where the allocator hands back dirty memory.
  testing::PoisonedAllocations poisoned;
  torch::manual_seed(3);
  const torch::Tensor x = torch::randn({2, 3, 16, 16}).contiguous(torch::MemoryFormat::ChannelsLast);
  const torch::Tensor y = torch::randint(3, {2});
  auto params = resnet->parameters();
  resnet->zero_grad();
  resnet->loss(resnet->forward(x), y).backward();  // every .grad defined, as after a real step
  Communicator alone;
  GradientReducer reducer(params, &alone, 1 << 16, 1 << 12);
  std::vector<torch::Tensor> computed(params.size());
  for (size_t i = 0; i < params.size(); ++i)
    params[i].register_hook([&computed, i](const torch::Tensor& g) { computed[i] = g.clone(); });
  for (int step = 0; step < 2; ++step) {  // the second step finds the first one's gradients in the buckets
    CAPTURE(step);
    reducer.prepare();
    resnet->loss(resnet->forward(x), y).backward();
    reducer.finish();
    for (size_t i = 0; i < params.size(); ++i) {
      CAPTURE(i);
      REQUIRE(computed[i].defined());
      CHECK(params[i].grad().strides() == params[i].strides());
      CHECK(torch::equal(params[i].grad(), computed[i]));
      computed[i] = torch::Tensor();
    }
  }
}

TEST_SUITE_END();
