// The training input path (loader.h) on the CPU: the same batches in the same order as the loop gathered them
// before the loader (whole float data set, Dataset::gather of the sampler's batch per epoch), bit for bit, from
// any resume position, with the loader thread running ahead into reused buffers and without it. What only a GPU
// runs (pinned buffers, the copy stream and its events) is not tested here.
#include <doctest/doctest.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <stdexcept>
#include <thread>
#include <vector>

#include "data.h"
#include "loader.h"
#include "sampler.h"

using namespace hpctrain;

namespace {

// Fashion-MNIST-shaped uint8 images as data.cc reads them, and labels.
struct Images {
  torch::Tensor bytes, labels;
};
Images make_images(int64_t n) {
  torch::Generator gen = at::detail::createCPUGenerator(11);
  return {torch::randint(0, 256, {n, 28, 28}, gen, torch::kUInt8), torch::randint(0, 10, {n}, gen, torch::kInt64)};
}

// The batches before the loader: the whole set converted to float once, each step's batch gathered from the
// epoch's shard (loop.cc and data.cc at 8f93545).
std::vector<Batch> old_path(const Dataset& floats, const BatchSequence& seq, int64_t count) {
  std::vector<Batch> out;
  for (int64_t epoch = seq.epoch, batch = seq.batch; static_cast<int64_t>(out.size()) < count; ++epoch, batch = 0) {
    const auto shard = seq.sampler.shard(epoch);
    for (; batch < seq.batches_per_epoch && static_cast<int64_t>(out.size()) < count; ++batch)
      out.push_back(floats.gather(DistributedSampler::batch(shard, batch, seq.local_batch)));
  }
  return out;
}

// Every batch of `loader` (scaled as the device does), compared with the old path's; `carried`: the dtype the
// batch travels in (uint8 images, float synthetic samples).
void check_same_batches(BatchLoader& loader, const std::vector<Batch>& expected, bool target_is_input,
                        torch::ScalarType carried = torch::kUInt8) {
  for (size_t k = 0; k < expected.size(); ++k) {
    CAPTURE(k);
    const Batch b = loader.next();
    CHECK((b.input.scalar_type() == carried));
    CHECK(b.target.is_same(b.input) == target_is_input);
    const torch::Tensor input = scale_images(b.input), target = target_is_input ? input : scale_images(b.target);
    REQUIRE((input.scalar_type() == torch::kFloat32));
    CHECK(torch::equal(input, expected[k].input));
    CHECK(torch::equal(target, expected[k].target));
  }
  CHECK_THROWS_AS(loader.next(), std::logic_error);
}

// The threads of this process.
size_t thread_count() {
  return std::distance(std::filesystem::directory_iterator("/proc/self/task"), std::filesystem::directory_iterator());
}
// thread_count() once it is `want`, or after a bound of 10 s: a joined thread leaves /proc/self/task a moment
// after the join returns (the kernel wakes the joiner before it removes the thread).
size_t thread_count_settled(size_t want) {
  for (int i = 0; i < 10000 && thread_count() != want; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return thread_count();
}

}  // namespace

TEST_SUITE_BEGIN("BatchLoader");

TEST_CASE("the auto-encoder's batches are the old path's bit for bit, every epoch, ahead or not, from any position") {
  const Images images = make_images(103);
  const torch::Tensor flat = images.bytes.reshape({103, -1});
  const Dataset bytes(flat, torch::Tensor(), 103);
  const Dataset floats(flat.to(torch::kFloat32).div_(255.0), torch::Tensor(), 103);
  for (const auto& start : std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {1, 3}, {0, 6}}) {
    for (const auto& mode : std::vector<std::pair<int, bool>>{{1, false}, {2, true}, {3, true}}) {
      const int64_t epoch = start.first, batch = start.second;
      const int slots = mode.first;
      const bool ahead = mode.second;
      CAPTURE(epoch);
      CAPTURE(batch);
      CAPTURE(slots);
      const BatchSequence seq{DistributedSampler(103, 2, 1, true, 5), 8, 6, 3, epoch, batch};
      BatchLoader loader(bytes, seq, torch::kCPU, slots, ahead);
      // A start at the epoch's end is the next epoch's first batch, as the loop takes it.
      const BatchSequence from = batch < 6 ? seq : BatchSequence{seq.sampler, 8, 6, 3, epoch + 1, 0};
      const int64_t count = (3 - from.epoch) * 6 - from.batch;
      check_same_batches(loader, old_path(floats, from, count), true);
    }
  }
}

TEST_CASE("classifier batches: images and labels in the old order, through the loader thread") {
  const Images images = make_images(64);
  const Dataset bytes(images.bytes.unsqueeze(1), images.labels, 64);
  const Dataset floats(images.bytes.to(torch::kFloat32).div_(255.0).unsqueeze(1), images.labels, 64);
  const BatchSequence seq{DistributedSampler(64, 1, 0, true, 9), 16, 4, 2, 0, 1};
  BatchLoader loader(bytes, seq, torch::kCPU, 3, true);
  check_same_batches(loader, old_path(floats, seq, 7), false);
}

TEST_CASE("synthetic float samples pass through unchanged, a pool repeated to the data set's size") {
  torch::Generator gen = at::detail::createCPUGenerator(3);
  const Dataset data(torch::rand({10, 784}, gen), torch::Tensor(), 40);
  const BatchSequence seq{DistributedSampler(40, 1, 0, true, 1), 8, 5, 2, 0, 0};
  BatchLoader loader(data, seq, torch::kCPU, 3, true);
  check_same_batches(loader, old_path(data, seq, 10), true, torch::kFloat32);
}

TEST_CASE("a loader stopped early (a run's last step, a stop signal) ends its thread") {
  // Its thread waits for a free slot when it is destroyed: a destructor that does not wake and join it hangs (the
  // test's time limit fails it), and one that leaves it running leaves a thread behind, counted here.
  const Images images = make_images(64);
  const Dataset bytes(images.bytes.reshape({64, -1}), torch::Tensor(), 64);
  const BatchSequence seq{DistributedSampler(64, 1, 0, false, 0), 4, 16, 10, 0, 0};
  for (int taken : {0, 1, 5}) {
    CAPTURE(taken);
    const size_t before = thread_count();
    {
      BatchLoader loader(bytes, seq, torch::kCPU, 3, true);
      CHECK(thread_count() == before + 1);
      for (int k = 0; k < taken; ++k) CHECK(loader.next().input.size(0) == 4);
    }
    CHECK(thread_count_settled(before) == before);
  }
}

TEST_CASE("gather_parts: at most the threads and the rows, at least 1 MiB a part, never 0") {
  constexpr int64_t mib = int64_t{1} << 20;
  CHECK(gather_parts(0, 0, 16) == 1);
  CHECK(gather_parts(100352, 128, 16) == 1);      // Fashion-MNIST's batch of 128: one thread
  CHECK(gather_parts(154140672, 256, 16) == 16);  // 256 ResNet images of 224x224 floats
  CHECK(gather_parts(154140672, 256, 1) == 1);
  CHECK(gather_parts(154140672, 4, 16) == 4);      // no more parts than rows
  CHECK(gather_parts(3 * mib - 1, 256, 16) == 2);  // whole MiBs only
  CHECK(gather_parts(3 * mib, 256, 16) == 3);
  CHECK(gather_parts(64 * mib, 256, 0) == 1);
}

TEST_CASE("a large batch gathered in parts on several threads is index_select's, bit for bit, row order kept") {
  torch::Generator gen = at::detail::createCPUGenerator(5);
  const torch::Tensor pool = torch::randn({24, 3, 64, 64}, gen);  // 48 kB rows
  const torch::Tensor labels = torch::randint(0, 1000, {24}, gen, torch::kInt64);
  const Dataset data(pool, labels, 1000);
  std::vector<int64_t> indices;
  for (int64_t i = 0; i < 96; ++i) indices.push_back((i * 37 + 5) % 1000);  // 4.7 MB: 4 parts
  REQUIRE(gather_parts(96 * pool[0].nbytes(), 96, 8) == 4);
  const Batch expected = data.gather(indices);
  for (int threads : {1, 3, 8}) {
    CAPTURE(threads);
    Batch out = data.empty_batch(96, false);
    data.gather_into(indices, out, threads);
    CHECK(torch::equal(out.input, expected.input));
    CHECK(torch::equal(out.target, expected.target));
  }
}

TEST_CASE("the resident-batch hook hands the first batch every step, ahead or not, and ends where the sequence ends") {
  const Images images = make_images(64);
  const Dataset data(images.bytes.unsqueeze(1), images.labels, 64);
  BatchSequence seq{DistributedSampler(64, 1, 0, true, 4), 4, 16, 1, 0, 3};  // from batch 3: 13 batches
  seq.resident = true;
  const Batch expected = data.gather(DistributedSampler::batch(seq.sampler.shard(0), 3, 4));
  for (bool ahead : {false, true}) {
    CAPTURE(ahead);
    BatchLoader loader(data, seq, torch::kCPU, 3, ahead);
    for (int k = 0; k < 13; ++k) {
      CAPTURE(k);
      const Batch b = loader.next();
      CHECK(torch::equal(b.input, expected.input));
      CHECK(torch::equal(b.target, expected.target));
    }
    CHECK_THROWS_AS(loader.next(), std::logic_error);
  }
  seq.resident = false;  // the same loader without the hook: batch 4 is another batch
  BatchLoader loader(data, seq, torch::kCPU, 1, false);
  loader.next();
  CHECK_FALSE(torch::equal(loader.next().input, expected.input));
}

TEST_CASE("batch_checksum: the same bytes, the same number; another row, a swap or a stale batch, another") {
  const Images images = make_images(32);
  const Dataset data(images.bytes.unsqueeze(1), images.labels, 32);
  const int64_t first = batch_checksum(data.gather({0, 1, 2, 3}));
  CHECK(batch_checksum(data.gather({0, 1, 2, 3})) == first);
  CHECK(batch_checksum(data.gather({0, 1, 3, 2})) != first);  // rows swapped
  CHECK(batch_checksum(data.gather({0, 1, 2, 4})) != first);  // another row
  const Dataset floats(torch::rand({8, 5}), torch::Tensor(), 8);  // float samples, the target the input
  const Batch b = floats.gather({1, 2});
  Batch copied{b.input.clone(), torch::Tensor()};
  copied.target = copied.input;
  CHECK(batch_checksum(copied) == batch_checksum(b));
  copied.input[0][0] += 1.0f;
  CHECK(batch_checksum(copied) != batch_checksum(b));
  // The sum as defined, byte by byte on the host: input bytes from position 0, then the target's after them.
  const Batch odd = data.gather({5, 9, 1});  // 3 x 784 input bytes (not a multiple of 251), 3 int64 labels
  std::vector<uint8_t> all(static_cast<size_t>(odd.input.numel() + odd.target.numel() * 8));
  std::memcpy(all.data(), odd.input.contiguous().data_ptr(), static_cast<size_t>(odd.input.numel()));
  std::memcpy(all.data() + odd.input.numel(), odd.target.contiguous().data_ptr(),
              static_cast<size_t>(odd.target.numel() * 8));
  int64_t by_hand = 0;
  for (size_t i = 0; i < all.size(); ++i) by_hand += int64_t{all[i]} * static_cast<int64_t>(i % 251 + 1);
  CHECK(batch_checksum(odd) == by_hand);
  // The loader's test hook: batch 2 of the sequence repeats batch 1's samples, which the checksum tells apart.
  BatchSequence seq{DistributedSampler(32, 1, 0, true, 4), 4, 8, 1, 0, 0};
  seq.stale = 2;
  BatchLoader loader(data, seq, torch::kCPU, 1, false);
  const int64_t b0 = batch_checksum(loader.next()), b1 = batch_checksum(loader.next());
  const int64_t b2 = batch_checksum(loader.next());
  CHECK(b2 == b1);
  CHECK(b1 != b0);
  const auto shard = seq.sampler.shard(0);
  CHECK(b2 != batch_checksum(data.gather(DistributedSampler::batch(shard, 2, 4))));
}

// Every byte value scales to the IEEE float quotient b / 255.0f computed here on the host, on the CPU and (where one
// is visible) on a GPU: a GPU dividing by a host number multiplies by its reciprocal, one ulp off for 126 values.
TEST_CASE("scale_images: all 256 byte values give b / 255.0f exactly, on the CPU and on a visible GPU") {
  const torch::Tensor bytes = torch::arange(256, torch::kInt64).to(torch::kUInt8);
  std::vector<torch::Device> devices{torch::Device(torch::kCPU)};
  if (torch::cuda::is_available()) devices.emplace_back(torch::kCUDA, 0);
  for (const auto& device : devices) {
    CAPTURE(device.str());
    const torch::Tensor scaled = scale_images(bytes.to(device)).cpu();
    REQUIRE((scaled.scalar_type() == torch::kFloat32));
    int differ = 0;
    for (int b = 0; b < 256; ++b) {
      const float expected = static_cast<float>(b) / 255.0f;
      const float got = scaled[b].item<float>();
      differ += std::memcmp(&expected, &got, sizeof(float)) != 0 ? 1 : 0;
    }
    CHECK(differ == 0);
  }
}

TEST_SUITE_END();
