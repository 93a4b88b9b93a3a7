// The training input path: see loader.h.
#include "loader.h"

#include <algorithm>
#include <stdexcept>

namespace hpctrain {

BatchLoader::BatchLoader(const Dataset& data, BatchSequence sequence, const torch::Device& device, int slots,
                         bool ahead, int gather_threads)
    : m_data(data), m_seq(std::move(sequence)), m_gather_threads(gather_threads) {
  if (m_seq.batches_per_epoch > 0 && m_seq.batch >= m_seq.batches_per_epoch) {  // as the loop: the next epoch
    ++m_seq.epoch;
    m_seq.batch = 0;
  }
  ahead = ahead || device.is_cuda();  // the copies are queued as the thread fills the buffers
  const int n = ahead ? std::max(slots, 2) : 1;
  for (int s = 0; s < n; ++s) {
    m_host.push_back(m_data.empty_batch(m_seq.local_batch, device.is_cuda()));
    if (!device.is_cuda()) continue;
    const Batch& host = m_host.back();
    Batch dev;
    dev.input = torch::empty(host.input.sizes(), host.input.options().device(device).pinned_memory(false));
    dev.target = host.target.is_same(host.input)
                     ? dev.input
                     : torch::empty(host.target.sizes(), host.target.options().device(device).pinned_memory(false));
    m_dev.push_back(dev);
  }
  if (device.is_cuda()) m_copy = std::make_unique<CopyStream>(device, n);
  m_state.assign(static_cast<size_t>(n), Slot::free);
  m_batch_in.assign(static_cast<size_t>(n), -1);
  if (ahead) m_thread = std::thread([this] { fill_loop(); });
}

BatchLoader::~BatchLoader() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_stop = true;
  }
  m_changed.notify_all();
  if (m_thread.joinable()) m_thread.join();
}

int64_t BatchLoader::total() const {
  if (m_seq.batches_per_epoch <= 0) return 0;
  return std::max<int64_t>(0, (m_seq.epochs - m_seq.epoch) * m_seq.batches_per_epoch - m_seq.batch);
}

// Batch k of the sequence: its epoch's shard (kept while the epoch lasts), its place in it.
std::vector<int64_t> BatchLoader::indices(int64_t k) {
  if (k == m_seq.stale && k > 0) --k;
  const int64_t position = m_seq.epoch * m_seq.batches_per_epoch + m_seq.batch + k;
  const int64_t epoch = position / m_seq.batches_per_epoch;
  if (epoch != m_shard_epoch) {
    m_shard = m_seq.sampler.shard(epoch);
    m_shard_epoch = epoch;
  }
  return DistributedSampler::batch(m_shard, position % m_seq.batches_per_epoch, m_seq.local_batch);
}

void BatchLoader::fill_loop() {
  const auto n = static_cast<int64_t>(m_state.size());
  try {
    for (int64_t k = 0; k < total(); ++k) {
      const auto s = static_cast<size_t>(k % n);
      bool copying = false;
      {
        std::unique_lock<std::mutex> lock(m_mutex);
        m_changed.wait(lock, [&] { return m_stop || m_state[s] == Slot::free || m_state[s] == Slot::copying; });
        if (m_stop) return;
        copying = m_state[s] == Slot::copying;
        m_state[s] = Slot::filling;
      }
      // The slot's last copy was queued before it was given back; only its event is left to wait for.
      if (copying) m_copy->wait_host(static_cast<int>(s));
      m_data.gather_into(indices(k), m_host[s], m_gather_threads);
      {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_state[s] = Slot::ready;
        m_batch_in[s] = k;
      }
      m_changed.notify_all();
    }
  } catch (...) {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_error = std::current_exception();
    m_changed.notify_all();
  }
}

int BatchLoader::take(int64_t k) {
  if (!m_thread.joinable()) {
    m_data.gather_into(indices(k), m_host[0], m_gather_threads);
    return 0;
  }
  const auto s = static_cast<size_t>(k % static_cast<int64_t>(m_state.size()));
  std::unique_lock<std::mutex> lock(m_mutex);
  m_changed.wait(lock, [&] { return m_error || (m_state[s] == Slot::ready && m_batch_in[s] == k); });
  if (m_error) std::rethrow_exception(m_error);
  m_state[s] = Slot::handed;
  return static_cast<int>(s);
}

void BatchLoader::issue_copy(int64_t k) {
  const auto s = static_cast<size_t>(k % static_cast<int64_t>(m_state.size()));
  // The slot is marked copying only once its copies are queued and their event recorded: the loader thread
  // waits on that event before it refills the slot.
  std::unique_lock<std::mutex> lock(m_mutex);
  m_changed.wait(lock, [&] { return m_error || (m_state[s] == Slot::ready && m_batch_in[s] == k); });
  if (m_error) std::rethrow_exception(m_error);
  lock.unlock();
  m_copy->copy(static_cast<int>(s), m_dev[s].input, m_host[s].input);
  if (!m_host[s].target.is_same(m_host[s].input)) m_copy->copy(static_cast<int>(s), m_dev[s].target, m_host[s].target);
  lock.lock();
  m_state[s] = Slot::copying;
  lock.unlock();
  m_changed.notify_all();
}

Batch BatchLoader::next() {
  if (m_next >= total()) throw std::logic_error("BatchLoader::next past the end of its batches");
  const int64_t k = m_next++;
  // The first batch's buffers are never refilled: the thread waits once the other slots are full, and no copy is
  // queued after batch 1's.
  if (m_seq.resident && k > 0) return m_first;
  Batch batch = next_batch(k);
  if (m_seq.resident) m_first = batch;
  return batch;
}

Batch BatchLoader::next_batch(int64_t k) {
  const auto n = static_cast<int64_t>(m_state.size());
  if (!m_copy) {
    if (m_thread.joinable() && k > 0) {  // the previous batch's step is done: its slot may be refilled
      {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_state[static_cast<size_t>((k - 1) % n)] = Slot::free;
      }
      m_changed.notify_all();
    }
    return m_host[static_cast<size_t>(take(k))];
  }
  while (m_issued <= k) issue_copy(m_issued++);
  const auto s = static_cast<int>(k % n);
  m_copy->use(s);
  if (m_issued < total()) issue_copy(m_issued++);  // batch k+1 crosses while step k computes
  return m_dev[static_cast<size_t>(s)];
}

}  // namespace hpctrain
