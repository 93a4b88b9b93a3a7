// DistributedSampler: shards are disjoint and cover the data, padding wraps, order depends on seed + epoch only,
// and global batches do not depend on the number of ranks (what resuming on another world size relies on).
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>

#include "sampler.h"

using hpctrain::DistributedSampler;
using hpctrain::seeded_permutation;

TEST_SUITE_BEGIN("DistributedSampler");

TEST_CASE("a seeded permutation holds every index once and depends only on the seed") {
  for (int64_t n : {0, 1, 2, 7, 100}) {
    auto p = seeded_permutation(n, 42);
    auto sorted = p;
    std::sort(sorted.begin(), sorted.end());
    for (int64_t i = 0; i < n; ++i) CHECK(sorted[static_cast<size_t>(i)] == i);
    CHECK(p == seeded_permutation(n, 42));
  }
  CHECK(seeded_permutation(100, 1) != seeded_permutation(100, 2));
  // Fixed output: a change here would silently change every run's data order.
  CHECK(seeded_permutation(8, 0) == std::vector<int64_t>{1, 2, 6, 5, 4, 0, 3, 7});
}

TEST_CASE("shards of every rank together cover the data set, padded to equal length by wrapping") {
  for (int64_t n = 1; n <= 23; ++n) {
    for (int world = 1; world <= 5; ++world) {
      for (bool shuffle : {false, true}) {
        for (int64_t epoch = 0; epoch < 3; ++epoch) {
          std::map<int64_t, int> seen;
          int64_t per_rank = -1;
          for (int rank = 0; rank < world; ++rank) {
            DistributedSampler s(n, world, rank, shuffle, 7);
            const auto shard = s.shard(epoch);
            CHECK(static_cast<int64_t>(shard.size()) == (n + world - 1) / world);
            if (per_rank >= 0) CHECK(static_cast<int64_t>(shard.size()) == per_rank);
            per_rank = static_cast<int64_t>(shard.size());
            for (int64_t i : shard) {
              CHECK(i >= 0);
              CHECK(i < n);
              ++seen[i];
            }
          }
          CHECK(static_cast<int64_t>(seen.size()) == n);  // every sample is read
          const int64_t padding = per_rank * world - n;
          int64_t extra = 0;
          for (auto& entry : seen) extra += entry.second - 1;
          CHECK(extra == padding);  // duplicates only from padding
          if (n % world == 0) CHECK(padding == 0);  // then the shards are disjoint
        }
      }
    }
  }
}

TEST_CASE("padding repeats the start of the epoch's order, as PyTorch's sampler does") {
  DistributedSampler s(5, 4, 0, false, 0);
  CHECK(s.epoch_order(0) == std::vector<int64_t>{0, 1, 2, 3, 4, 0, 1, 2});
  DistributedSampler r1(5, 4, 1, false, 0);
  CHECK(r1.shard(0) == std::vector<int64_t>{1, 0});
}

TEST_CASE("without shuffling every epoch has the same order; with it the order changes per epoch") {
  DistributedSampler fixed(50, 2, 1, false, 3);
  CHECK(fixed.shard(0) == fixed.shard(5));
  DistributedSampler shuffled(50, 2, 1, true, 3);
  CHECK(shuffled.shard(0) != shuffled.shard(1));
  CHECK(shuffled.shard(1) == DistributedSampler(50, 2, 1, true, 3).shard(1));  // reproducible
  CHECK(shuffled.shard(1) == DistributedSampler(50, 2, 1, true, 2).shard(2));  // seed + epoch, as PyTorch
}

TEST_CASE("a global batch holds the same samples on any number of ranks") {
  const int64_t n = 96, global = 12;
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    for (int64_t k = 0; k < n / global; ++k) {
      std::multiset<int64_t> reference;
      for (int world : {1, 2, 3, 4, 6}) {
        std::multiset<int64_t> batch;
        for (int rank = 0; rank < world; ++rank) {
          DistributedSampler s(n, world, rank, true, 11);
          CHECK(s.batches_per_epoch(global / world) == n / global);
          for (int64_t i : DistributedSampler::batch(s.shard(epoch), k, global / world)) batch.insert(i);
        }
        if (world == 1) reference = batch;
        CHECK(batch == reference);
      }
    }
  }
}

TEST_CASE("the last partial batch is dropped and out-of-range batches throw") {
  DistributedSampler s(10, 1, 0, false, 0);
  CHECK(s.batches_per_epoch(3) == 3);
  CHECK(s.batches_per_epoch(11) == 0);
  const auto shard = s.shard(0);
  CHECK(DistributedSampler::batch(shard, 2, 3) == std::vector<int64_t>{6, 7, 8});
  CHECK_THROWS(DistributedSampler::batch(shard, 3, 3));
  CHECK_THROWS(DistributedSampler(0, 1, 0, false, 0));
  CHECK_THROWS(DistributedSampler(10, 2, 2, false, 0));
}

TEST_SUITE_END();
