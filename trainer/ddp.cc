// Communicator and GradientReducer: see ddp.h.
#include "ddp.h"

#include <torch/csrc/autograd/utils/lambda_post_hook.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <thread>

#include "bucket_plan.h"
#include "util/error.h"

namespace hpctrain {
namespace {

using Steady = std::chrono::steady_clock;

bool is_loopback(const std::string& addr) { return addr == "localhost" || addr.rfind("127.", 0) == 0; }

std::chrono::milliseconds collective_timeout() {
  const char* text = std::getenv("HPCLAUNCH_TRAIN_TIMEOUT_S");
  return std::chrono::milliseconds(static_cast<int64_t>((text ? std::atof(text) : 1800.0) * 1000));
}

}  // namespace

std::unique_ptr<Communicator> Communicator::connect(const DistEnv& env, const std::string& backend) {
  auto comm = std::make_unique<Communicator>();
  comm->m_rank = env.rank;
  comm->m_world = env.world_size;
  comm->m_backend = backend;
  if (env.world_size == 1) return comm;
  const auto timeout = collective_timeout();
  try {
    // As torch.distributed's env:// rendezvous: under an agent (torchrun, hpclaunch agent) everyone is a client
    // of the agent's store, in a prefix per restart; otherwise rank 0 serves the store.
    if (env.agent_store) {
      comm->m_store = compat::make_tcp_store(env.master_addr, env.master_port, false, env.world_size, timeout);
      comm->m_store = compat::make_prefix_store("/worker/attempt_" + env.restart_count, comm->m_store);
    } else {
      comm->m_store =
          compat::make_tcp_store(env.master_addr, env.master_port, env.rank == 0, env.world_size, timeout);
    }
    comm->m_store = compat::make_prefix_store("hpclaunch-train/", comm->m_store);
    comm->m_loopback = is_loopback(env.master_addr);
    comm->m_timeout = timeout;
    comm->make_group();
  } catch (const hpclaunch::Error&) {
    throw;
  } catch (const std::exception& e) {
    std::string what = e.what();
    what = what.substr(0, what.find('\n'));
    throw hpclaunch::failure("MASTER_ADDR:MASTER_PORT", "cannot form the process group at " + env.master_addr +
                                                            ":" + std::to_string(env.master_port) + ": " + what,
                             "check that rank 0 runs, the port is free and the address is reachable");
  }
  return comm;
}

void Communicator::make_group() {
  if (m_backend == "nccl") {  // what this build has: choose_backend (gpu_policy.h) decided
    m_group = compat::make_nccl(m_store, m_rank, m_world, m_timeout);
  } else {
    const char* ifname = std::getenv("GLOO_SOCKET_IFNAME");
    m_group = compat::make_gloo(m_store, m_rank, m_world, ifname ? ifname : "", m_loopback, m_timeout);
  }
}

std::unique_ptr<Communicator> Communicator::subgroup(const std::string& name, const std::vector<int>& members) const {
  auto sub = std::make_unique<Communicator>();
  auto me = std::find(members.begin(), members.end(), m_rank);
  if (me == members.end())
    throw hpclaunch::failure("process group '" + name + "'", "rank " + std::to_string(m_rank) + " is not one of its members",
                             "create a group only on its members");
  sub->m_rank = static_cast<int>(me - members.begin());
  sub->m_world = static_cast<int>(members.size());
  sub->m_backend = m_backend;
  sub->m_spin = m_spin;
  if (sub->m_world == 1) return sub;
  sub->m_loopback = m_loopback;
  sub->m_timeout = m_timeout;
  sub->m_store = compat::make_prefix_store("group/" + name + "/", m_store);
  sub->make_group();
  return sub;
}

void Communicator::wait(const compat::WorkPtr& work) const {
  if (m_spin.count() > 0) {
    const auto until = Steady::now() + m_spin;
    while (!work->isCompleted() && Steady::now() < until) std::this_thread::yield();
  }
  work->wait();  // rethrows the collective's error; at once when it is complete
}

void Communicator::broadcast(const std::vector<torch::Tensor>& tensors) {
  if (m_world == 1 || tensors.empty()) return;
  std::map<std::string, std::vector<torch::Tensor>> by_kind;
  for (const auto& t : tensors) by_kind[std::string(t.dtype().name()) + t.device().str()].push_back(t);
  for (auto& entry : by_kind) {
    std::vector<torch::Tensor> flat_parts;
    for (const auto& t : entry.second) flat_parts.push_back(t.detach().reshape({-1}));
    std::vector<torch::Tensor> flat{torch::cat(flat_parts)};
    c10d::BroadcastOptions options;
    options.rootRank = 0;
    wait(m_group->broadcast(flat, options));
    if (m_rank == 0) continue;
    int64_t offset = 0;
    torch::NoGradGuard no_grad;
    for (auto& t : entry.second) {
      t.detach().copy_(flat[0].narrow(0, offset, t.numel()).view(t.sizes()));
      offset += t.numel();
    }
  }
}

void Communicator::shutdown() {
#if defined(HPCTRAIN_WITH_NCCL) && (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4))
  if (m_backend == "nccl" && m_group) static_cast<c10d::ProcessGroupNCCL&>(*m_group).shutdown();
#endif
}

compat::WorkPtr Communicator::allreduce_async(torch::Tensor& tensor) {
  std::vector<torch::Tensor> list{tensor};
  return m_group->allreduce(list);
}

void Communicator::allreduce_sum(torch::Tensor& tensor) {
  if (m_world == 1) return;
  wait(allreduce_async(tensor));
}

void Communicator::barrier() {
  if (m_world == 1) return;
  wait(m_group->barrier());
}

GradientReducer::GradientReducer(std::vector<torch::Tensor> params, Communicator* comm, int64_t cap_bytes,
                                 int64_t first_cap_bytes)
    : m_params(std::move(params)), m_comm(comm) {
  std::vector<ParamInfo> infos;
  for (const auto& p : m_params)
    infos.push_back({static_cast<int64_t>(p.numel() * p.element_size()),
                     std::string(p.dtype().name()) + "/" + p.device().str()});
  const auto plan = plan_buckets(infos, cap_bytes, first_cap_bytes);
  m_views.resize(m_params.size());
  m_bucket_of.resize(m_params.size());
  for (size_t b = 0; b < plan.size(); ++b) {
    Bucket bucket;
    bucket.members = plan[b];
    int64_t numel = 0;
    for (size_t i : plan[b]) numel += m_params[i].numel();
    const bool last = b + 1 == plan.size();
    const auto& first = m_params[plan[b].front()];
    bucket.flat = torch::zeros({numel + (last ? k_control_slots : 0)}, first.options().requires_grad(false));
    int64_t offset = 0;
    for (size_t i : plan[b]) {
      // The view has the parameter's strides (channels-last weights too), as DDP's gradient_as_bucket_view.
      const torch::Tensor& p = m_params[i];
      m_views[i] = p.is_non_overlapping_and_dense() ? bucket.flat.as_strided(p.sizes(), p.strides(), offset)
                                                    : bucket.flat.narrow(0, offset, p.numel()).view(p.sizes());
      m_params[i].mutable_grad() = m_views[i];
      m_bucket_of[i] = b;
      offset += m_params[i].numel();
    }
    if (last) m_control = bucket.flat.narrow(0, numel, k_control_slots);
    m_buckets.push_back(std::move(bucket));
  }
  if (m_buckets.empty()) m_control = torch::zeros({k_control_slots});
  for (size_t i = 0; i < m_params.size(); ++i) {
    auto accumulator = torch::autograd::impl::grad_accumulator(m_params[i]);
    m_hook_keys.push_back(accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
        [this, i](const torch::autograd::variable_list& outputs, const torch::autograd::variable_list&) {
          mark_ready(i);
          return outputs;
        })));
    m_accumulators.push_back(std::move(accumulator));
  }
}

GradientReducer::~GradientReducer() {
  for (size_t i = 0; i < m_accumulators.size(); ++i) m_accumulators[i]->del_post_hook(m_hook_keys[i]);
}

std::vector<std::vector<size_t>> GradientReducer::plan() const {
  std::vector<std::vector<size_t>> out;
  for (const auto& b : m_buckets) out.push_back(b.members);
  return out;
}

void GradientReducer::prepare() {
  std::lock_guard<std::mutex> lock(m_mutex);
  for (auto& b : m_buckets) {
    b.flat.zero_();
    b.pending = b.members.size();
    b.work.reset();
  }
  m_next_launch = 0;
  m_armed = true;
}

void GradientReducer::mark_ready(size_t param) {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (!m_armed) return;
  // Autograd accumulates into the existing .grad in place, so it stays the bucket view; should anything have
  // swapped it, copy it back into the bucket.
  torch::Tensor& grad = m_params[param].mutable_grad();
  if (!grad.is_same(m_views[param])) {
    m_views[param].copy_(grad);
    grad = m_views[param];
  }
  Bucket& bucket = m_buckets[m_bucket_of[param]];
  if (bucket.pending == 0) return;  // a parameter used twice: its hook fires per use, count it once
  --bucket.pending;
  while (m_next_launch < m_buckets.size() && m_buckets[m_next_launch].pending == 0) launch(m_next_launch++);
}

void GradientReducer::launch(size_t b) {
  if (m_comm == nullptr || m_comm->world_size() == 1) return;
  m_buckets[b].flat.div_(m_comm->world_size());
  m_buckets[b].work = m_comm->allreduce_async(m_buckets[b].flat);
}

void GradientReducer::finish() {
  const auto start = Steady::now();
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    while (m_next_launch < m_buckets.size()) {
      m_buckets[m_next_launch].pending = 0;
      launch(m_next_launch++);
    }
    m_armed = false;
  }
  for (auto& b : m_buckets)
    if (b.work) m_comm->wait(b.work);
  m_last_wait = std::chrono::duration<double>(Steady::now() - start).count();
}

}  // namespace hpctrain
