// Distributed data parallel, done by hand on c10d: the process group over a TCPStore (Communicator) and the
// gradient reducer that allreduces ~25 MB buckets from autograd hooks as they fill, overlapping backward.
#pragma once
#include <torch/torch.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "c10d_compat.h"
#include "options.h"

namespace hpctrain {

class Communicator {
 public:
  // World of one: no store, no process group; every collective is a no-op.
  Communicator() = default;
  // Connects to MASTER_ADDR:MASTER_PORT (rank 0 serves the store unless the launcher's agent does) and builds
  // the process group. backend: "gloo" or "nccl". Throws hpclaunch::Error on failure.
  static std::unique_ptr<Communicator> connect(const DistEnv& env, const std::string& backend);

  // A communicator over `members` (world ranks, in order; this rank among them), on its own prefix of this one's
  // store: every member calls it with the same name and members, and groups of different names may run at once
  // (the probe's NVLink-domain groups). A group of one is a world of one.
  std::unique_ptr<Communicator> subgroup(const std::string& name, const std::vector<int>& members) const;

  int rank() const { return m_rank; }
  int world_size() const { return m_world; }
  const std::string& backend() const { return m_backend; }

  // Overwrites the tensors with rank 0's, coalesced into one transfer per dtype.
  void broadcast(const std::vector<torch::Tensor>& tensors);
  void allreduce_sum(torch::Tensor& tensor);
  compat::WorkPtr allreduce_async(torch::Tensor& tensor);
  void barrier();
  // Ends the process group after the run's last collective (NCCL from LibTorch 2.4 on warns when it is destroyed
  // without this); nothing else with gloo or older LibTorch.
  void shutdown();

  // How a finished collective is awaited: poll (yielding the core) for up to `spin`, then block. Gloo on a
  // busy or virtual machine wakes a blocked waiter late (~0.5 ms a step here); polling takes that out.
  void set_spin_wait(std::chrono::microseconds spin) { m_spin = spin; }
  void wait(const compat::WorkPtr& work) const;

 private:
  std::chrono::microseconds m_spin{0};
  int m_rank = 0;
  int m_world = 1;
  std::string m_backend = "none";
  bool m_loopback = false;
  std::chrono::milliseconds m_timeout{0};
  void make_group();  // m_group over m_store for m_rank of m_world
  compat::StorePtr m_store;
  compat::BackendPtr m_group;
};

// Gradients live in flat bucket tensors (each parameter's .grad is a view into its bucket). A post-hook on
// every parameter's gradient accumulator counts it ready; when a bucket is complete it is divided by the world
// size and allreduced asynchronously, buckets always launched in the same order on every rank.
// The last bucket carries k_control_slots extra floats, averaged with the gradients for free: the training
// loop puts its loss and its stop/save requests there, so ranks agree on them without another collective.
class GradientReducer {
 public:
  static constexpr int64_t k_control_slots = 4;

  GradientReducer(std::vector<torch::Tensor> params, Communicator* comm, int64_t cap_bytes,
                  int64_t first_cap_bytes = 1 << 20);
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  // Before forward: zero the buckets (and so every .grad) and reset the ready counts.
  void prepare();
  // Slots written after prepare() and before backward; after finish() they hold the mean over ranks.
  torch::Tensor control() { return m_control; }
  // After backward: launch buckets no hook completed (unused parameters), then wait for all.
  void finish();

  double last_wait_seconds() const { return m_last_wait; }
  size_t bucket_count() const { return m_buckets.size(); }
  // Bucket plan, for tests and the log: parameter indices per bucket in launch order.
  std::vector<std::vector<size_t>> plan() const;

 private:
  struct Bucket {
    torch::Tensor flat;
    std::vector<size_t> members;
    size_t pending = 0;
    compat::WorkPtr work;
  };
  void mark_ready(size_t param);
  void launch(size_t bucket);

  std::vector<torch::Tensor> m_params;
  std::vector<torch::Tensor> m_views;    // the bucket slice each parameter's gradient must live in
  std::vector<size_t> m_bucket_of;
  std::vector<Bucket> m_buckets;
  std::vector<compat::NodePtr> m_accumulators;
  std::vector<uintptr_t> m_hook_keys;
  torch::Tensor m_control;
  Communicator* m_comm;
  std::mutex m_mutex;
  size_t m_next_launch = 0;
  bool m_armed = false;
  double m_last_wait = 0.0;
};

}  // namespace hpctrain
