// Loop and foreach optimizer steps: see optimizer.h.
#include "optimizer.h"

#include <torch/version.h>

#include <sstream>
#include <string>
#include <type_traits>

namespace hpctrain {
namespace {

// torch::optim's state is keyed by the parameter's TensorImpl: as a string in LibTorch 1.13 (its address as
// c10::guts::to_string wrote it, through an ostream; 2.x has no c10::guts::to_string), as the pointer in later
// versions. The key type says which.
template <typename State>
typename State::key_type state_key(const torch::Tensor& p) {
  if constexpr (std::is_same_v<typename State::key_type, std::string>) {
    std::ostringstream key;
    key << p.unsafeGetTensorImpl();
    return key.str();
  } else {
    return p.unsafeGetTensorImpl();
  }
}

template <typename ParamState>
ParamState& param_state(torch::optim::Optimizer& optimizer, const torch::Tensor& p) {
  auto& states = optimizer.state();
  const auto key = state_key<std::decay_t<decltype(states)>>(p);
  auto it = states.find(key);
  if (it == states.end()) it = states.emplace(key, std::make_unique<ParamState>()).first;
  return static_cast<ParamState&>(*it->second);
}

// xs * s, xs *= s and xs /= s for a 0-d tensor s on the parameters' device, in the parameters' dtype: the
// overloads that take one scalar tensor (mul since LibTorch 2.1, div since 2.2) are one multi-tensor kernel on
// CUDA; a list of `n` references to s is one kernel per tensor there (the only way in older LibTorch). On the CPU
// both go tensor by tensor through mul_/div_, the same arithmetic: a float64 s would be rounded to the list's
// dtype first anyway.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
void foreach_mul_(std::vector<torch::Tensor>& xs, const torch::Tensor& s) { at::_foreach_mul_(xs, s); }
std::vector<torch::Tensor> foreach_mul(const std::vector<torch::Tensor>& xs, const torch::Tensor& s) {
  return at::_foreach_mul(xs, s);
}
#else
void foreach_mul_(std::vector<torch::Tensor>& xs, const torch::Tensor& s) {
  at::_foreach_mul_(xs, std::vector<torch::Tensor>(xs.size(), s));
}
std::vector<torch::Tensor> foreach_mul(const std::vector<torch::Tensor>& xs, const torch::Tensor& s) {
  return at::_foreach_mul(xs, std::vector<torch::Tensor>(xs.size(), s));
}
#endif
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 2)
void foreach_div_(std::vector<torch::Tensor>& xs, const torch::Tensor& s) { at::_foreach_div_(xs, s); }
#else
void foreach_div_(std::vector<torch::Tensor>& xs, const torch::Tensor& s) {
  at::_foreach_div_(xs, std::vector<torch::Tensor>(xs.size(), s));
}
#endif

}  // namespace

TrainOptimizer::TrainOptimizer(const TrainOptions& o, std::vector<torch::Tensor> params, OptimizerImpl impl)
    : m_impl(impl), m_adam(o.optimizer != "sgd"), m_params(std::move(params)) {
  if (m_adam)
    m_optimizer = std::make_unique<torch::optim::Adam>(m_params, torch::optim::AdamOptions(o.lr).weight_decay(o.weight_decay));
  else
    m_optimizer = std::make_unique<torch::optim::SGD>(
        m_params, torch::optim::SGDOptions(o.lr).momentum(o.momentum).weight_decay(o.weight_decay));
  if (m_impl != OptimizerImpl::foreach) return;
  const auto scalar = torch::TensorOptions().dtype(torch::kFloat64).device(m_params.front().device());
  m_lr = torch::full({}, o.lr, scalar);
  m_step = torch::zeros({}, scalar);
  collect_state();
}

// The state tensors the foreach step updates in place: torch::optim's own (created as its first step would), so
// that saving and loading stay torch::optim's. A load replaces them: collected again then.
void TrainOptimizer::collect_state() {
  torch::NoGradGuard no_grad;
  m_first.clear();
  m_second.clear();
  int64_t steps = 0;
  for (const auto& p : m_params) {
    if (m_adam) {
      auto& s = param_state<torch::optim::AdamParamState>(*m_optimizer, p);
      if (!s.exp_avg().defined()) s.exp_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
      if (!s.exp_avg_sq().defined()) s.exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
      steps = s.step();
      m_first.push_back(s.exp_avg());
      m_second.push_back(s.exp_avg_sq());
    } else {
      if (static_cast<torch::optim::SGDOptions&>(m_optimizer->param_groups().front().options()).momentum() == 0)
        continue;
      // Zeros behave as torch::optim's first step (which clones the gradient): 0 * momentum + gradient.
      auto& s = param_state<torch::optim::SGDParamState>(*m_optimizer, p);
      if (!s.momentum_buffer().defined()) s.momentum_buffer(torch::zeros_like(p, torch::MemoryFormat::Preserve));
      m_first.push_back(s.momentum_buffer());
    }
  }
  m_step.fill_(static_cast<double>(steps));
}

void TrainOptimizer::set_lr(double lr) {
  for (auto& group : m_optimizer->param_groups()) group.options().set_lr(lr);
  if (m_impl == OptimizerImpl::foreach) m_lr.fill_(lr);
}

void TrainOptimizer::step() {
  if (m_impl == OptimizerImpl::loop) {
    m_optimizer->step();
    return;
  }
  torch::NoGradGuard no_grad;
  if (m_adam) step_adam();
  else step_sgd();
}

// torch::optim::Adam's arithmetic (not AdamW), with the scalars that change per step as device tensors:
// p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps).
void TrainOptimizer::step_adam() {
  const auto& o = static_cast<const torch::optim::AdamOptions&>(m_optimizer->param_groups().front().options());
  const double beta1 = std::get<0>(o.betas()), beta2 = std::get<1>(o.betas());
  std::vector<torch::Tensor> grads;
  for (const auto& p : m_params) grads.push_back(p.grad());
  if (o.weight_decay() != 0) grads = at::_foreach_add(grads, m_params, o.weight_decay());
  m_step.add_(1);
  const torch::Tensor bias1 = 1 - torch::pow(beta1, m_step);
  const torch::Tensor bias2_sqrt = (1 - torch::pow(beta2, m_step)).sqrt();
  const auto dtype = m_params.front().scalar_type();  // the scalar overloads' fast path wants the list's dtype
  at::_foreach_mul_(m_first, beta1);
  at::_foreach_add_(m_first, grads, 1 - beta1);
  at::_foreach_mul_(m_second, beta2);
  at::_foreach_addcmul_(m_second, grads, grads, 1 - beta2);
  std::vector<torch::Tensor> denom = at::_foreach_sqrt(m_second);
  foreach_div_(denom, bias2_sqrt.to(dtype));
  at::_foreach_add_(denom, o.eps());
  std::vector<torch::Tensor> update = at::_foreach_div(m_first, denom);
  foreach_mul_(update, (-(m_lr / bias1)).to(dtype));
  at::_foreach_add_(m_params, update);
}

// torch::optim::SGD's arithmetic: d = g + wd p; b = momentum b + (1 - dampening) d; p -= lr (nesterov ? d + momentum b : b).
void TrainOptimizer::step_sgd() {
  const auto& o = static_cast<const torch::optim::SGDOptions&>(m_optimizer->param_groups().front().options());
  std::vector<torch::Tensor> grads;
  for (const auto& p : m_params) grads.push_back(p.grad());
  if (o.weight_decay() != 0) grads = at::_foreach_add(grads, m_params, o.weight_decay());
  std::vector<torch::Tensor> direction = grads;
  if (o.momentum() != 0) {
    at::_foreach_mul_(m_first, o.momentum());
    at::_foreach_add_(m_first, grads, 1 - o.dampening());
    direction = o.nesterov() ? at::_foreach_add(grads, m_first, o.momentum()) : m_first;
  }
  std::vector<torch::Tensor> update = foreach_mul(direction, m_lr.to(m_params.front().scalar_type()));
  at::_foreach_sub_(m_params, update);
}

void TrainOptimizer::before_save() {
  if (m_impl != OptimizerImpl::foreach || !m_adam) return;
  const auto steps = static_cast<int64_t>(m_step.item<double>());
  for (const auto& p : m_params) param_state<torch::optim::AdamParamState>(*m_optimizer, p).step(steps);
}

void TrainOptimizer::after_load() {
  if (m_impl == OptimizerImpl::foreach) collect_state();
}

}  // namespace hpctrain
