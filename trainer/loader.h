// The training input path: the batches of a run in the loop's order (epoch by epoch from the resume position, as
// the DistributedSampler shards them), gathered into host buffers allocated once and reused. For a GPU a loader
// thread runs ahead into pinned buffers (triple buffering) and each batch is copied on a copy stream
// (copy_stream.h) while the step before it computes; the GPU then scales uint8 images (scale_images). On the CPU
// the batch is gathered when asked, into one reused buffer, by the training thread (nothing to overlap there).
#pragma once
#include <torch/torch.h>

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "copy_stream.h"
#include "data.h"
#include "sampler.h"

namespace hpctrain {

// Which batches, in order: `batches_per_epoch` per epoch of `sampler`, from (epoch, batch) up to `epochs`.
struct BatchSequence {
  DistributedSampler sampler;
  int64_t local_batch = 0;
  int64_t batches_per_epoch = 0;
  int64_t epochs = 0;
  int64_t epoch = 0;  // the first batch's position
  int64_t batch = 0;
  int64_t stale = -1;  // test hook (TestHooks::stale_batch_step): batch `stale` of the sequence repeats the one before
  bool resident = false;  // bench hook (TestHooks::resident_batch): every next() returns the first batch again
};

class BatchLoader {
 public:
  // `slots`: host (and device) buffers; `ahead`: a loader thread fills them (else next() gathers). A CUDA
  // `device` takes both (pinned buffers, the copy stream); the CPU neither, except in tests. `gather_threads`:
  // how many threads may gather a large batch (Dataset::gather_into).
  BatchLoader(const Dataset& data, BatchSequence sequence, const torch::Device& device, int slots, bool ahead,
              int gather_threads = 1);
  ~BatchLoader();
  BatchLoader(const BatchLoader&) = delete;
  BatchLoader& operator=(const BatchLoader&) = delete;

  // The next batch on the device, ready for the current stream, images still uint8 (scale_images); valid until
  // the next call. Throws std::logic_error past the sequence's end.
  Batch next();

 private:
  enum class Slot { free, filling, ready, handed, copying };
  int64_t total() const;
  std::vector<int64_t> indices(int64_t k);
  void fill_loop();
  int take(int64_t k);          // the CPU: batch k gathered (or waited for) in its host slot; returns the slot
  void issue_copy(int64_t k);   // a GPU: batch k's copy from its host slot queued on the copy stream
  Batch next_batch(int64_t k);  // batch k of the sequence, as next() hands it

  const Dataset& m_data;
  BatchSequence m_seq;
  int m_gather_threads;
  std::vector<Batch> m_host, m_dev;
  std::unique_ptr<CopyStream> m_copy;
  std::vector<int64_t> m_shard;  // the shard of m_shard_epoch (the gathering thread's)
  int64_t m_shard_epoch = -1;
  int64_t m_next = 0;    // the batch next() returns
  int64_t m_issued = 0;  // batches whose copy is queued (CUDA)
  Batch m_first;         // the first batch handed out, for BatchSequence::resident
  // Between the two threads:
  std::mutex m_mutex;
  std::condition_variable m_changed;
  std::vector<Slot> m_state;
  std::vector<int64_t> m_batch_in;  // which batch each slot holds
  bool m_stop = false;
  std::exception_ptr m_error;  // what stopped the loader thread
  std::thread m_thread;
};

}  // namespace hpctrain
