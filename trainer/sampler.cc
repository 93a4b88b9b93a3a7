// DistributedSampler: see sampler.h.
#include "sampler.h"

#include <numeric>
#include <stdexcept>

namespace hpctrain {
namespace {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Uniform in [0, bound) without modulo bias (Lemire's rejection on 128-bit products).
uint64_t bounded(uint64_t& state, uint64_t bound) {
  unsigned __int128 m = static_cast<unsigned __int128>(splitmix64(state)) * bound;
  auto low = static_cast<uint64_t>(m);
  if (low < bound) {
    const uint64_t threshold = -bound % bound;
    while (low < threshold) {
      m = static_cast<unsigned __int128>(splitmix64(state)) * bound;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

}  // namespace

std::vector<int64_t> seeded_permutation(int64_t n, uint64_t seed) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  uint64_t state = seed;
  for (int64_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<int64_t>(bounded(state, static_cast<uint64_t>(i + 1)));
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
  }
  return order;
}

DistributedSampler::DistributedSampler(int64_t dataset_size, int world_size, int rank, bool shuffle, uint64_t seed)
    : m_size(dataset_size), m_world(world_size), m_rank(rank), m_shuffle(shuffle), m_seed(seed) {
  if (dataset_size <= 0) throw std::invalid_argument("dataset is empty");
  if (world_size <= 0 || rank < 0 || rank >= world_size) throw std::invalid_argument("rank outside the world");
  m_per_rank = (dataset_size + world_size - 1) / world_size;
}

std::vector<int64_t> DistributedSampler::epoch_order(int64_t epoch) const {
  std::vector<int64_t> order;
  if (m_shuffle) {
    order = seeded_permutation(m_size, m_seed + static_cast<uint64_t>(epoch));
  } else {
    order.resize(static_cast<size_t>(m_size));
    std::iota(order.begin(), order.end(), int64_t{0});
  }
  const int64_t total = m_per_rank * m_world;
  // Pad by repeating from the start, as DistributedSampler does, so every rank has the same count.
  for (int64_t i = m_size; i < total; ++i) order.push_back(order[static_cast<size_t>((i - m_size) % m_size)]);
  return order;
}

std::vector<int64_t> DistributedSampler::shard(int64_t epoch) const {
  const std::vector<int64_t> order = epoch_order(epoch);
  std::vector<int64_t> mine;
  mine.reserve(static_cast<size_t>(m_per_rank));
  for (size_t i = static_cast<size_t>(m_rank); i < order.size(); i += static_cast<size_t>(m_world))
    mine.push_back(order[i]);
  return mine;
}

std::vector<int64_t> DistributedSampler::batch(const std::vector<int64_t>& shard, int64_t batch_index,
                                               int64_t local_batch) {
  const auto begin = static_cast<size_t>(batch_index * local_batch);
  const auto end = begin + static_cast<size_t>(local_batch);
  if (batch_index < 0 || local_batch <= 0 || end > shard.size()) throw std::out_of_range("batch outside the shard");
  return {shard.begin() + static_cast<std::ptrdiff_t>(begin), shard.begin() + static_cast<std::ptrdiff_t>(end)};
}

}  // namespace hpctrain
