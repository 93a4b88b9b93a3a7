// Which dataset indices each rank reads: the semantics of PyTorch's DistributedSampler (disjoint shards,
// reshuffled per epoch from seed + epoch, padded by wrapping to equal length), plus global-batch positions so
// that a run resumed on another number of ranks continues with the same global batches.
#pragma once
#include <cstdint>
#include <vector>

namespace hpctrain {

class DistributedSampler {
 public:
  DistributedSampler(int64_t dataset_size, int world_size, int rank, bool shuffle, uint64_t seed);

  // Samples per rank in one epoch: ceil(dataset_size / world_size) (the padded shard length).
  int64_t samples_per_rank() const { return m_per_rank; }
  // The whole epoch's order before sharding (padded to samples_per_rank * world_size by wrapping around).
  std::vector<int64_t> epoch_order(int64_t epoch) const;
  // This rank's shard of the epoch: positions rank, rank + world, rank + 2*world... of epoch_order.
  std::vector<int64_t> shard(int64_t epoch) const;
  // Full per-rank batches in an epoch (the last partial batch is dropped, as DataLoader(drop_last=True)).
  int64_t batches_per_epoch(int64_t local_batch) const { return local_batch > 0 ? m_per_rank / local_batch : 0; }
  // This rank's indices for batch `batch_index` of the epoch, taken from a precomputed shard.
  static std::vector<int64_t> batch(const std::vector<int64_t>& shard, int64_t batch_index, int64_t local_batch);

 private:
  int64_t m_size;
  int m_world;
  int m_rank;
  bool m_shuffle;
  uint64_t m_seed;
  int64_t m_per_rank;
};

// A permutation of 0..n-1 that depends only on `seed` (SplitMix64-seeded Fisher-Yates; the same on every
// platform and standard library, which std::shuffle does not promise).
std::vector<int64_t> seeded_permutation(int64_t n, uint64_t seed);

}  // namespace hpctrain
