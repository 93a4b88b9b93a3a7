// Data sets: see data.h.
#include "data.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cstring>
#include <future>
#include <memory>

#include "idx_file.h"
#include "util/error.h"

namespace hpctrain {

Dataset::Dataset(torch::Tensor inputs, torch::Tensor targets, int64_t size)
    : m_inputs(std::move(inputs)), m_targets(std::move(targets)), m_size(size), m_pool(m_inputs.size(0)) {}

namespace {

torch::Tensor row_index(const std::vector<int64_t>& indices, int64_t pool, std::vector<int64_t>& rows) {
  rows.resize(indices.size());
  std::transform(indices.begin(), indices.end(), rows.begin(), [&](int64_t i) { return i % pool; });
  return torch::from_blob(rows.data(), {static_cast<int64_t>(rows.size())}, torch::kInt64);
}

}  // namespace

Batch Dataset::gather(const std::vector<int64_t>& indices) const {
  std::vector<int64_t> rows;
  const torch::Tensor index = row_index(indices, m_pool, rows);
  Batch batch;
  batch.input = m_inputs.index_select(0, index);
  batch.target = m_targets.defined() ? m_targets.index_select(0, index) : batch.input;
  return batch;
}

int gather_parts(int64_t bytes, int64_t rows, int threads) {
  constexpr int64_t k_least = int64_t{1} << 20;
  return static_cast<int>(std::max<int64_t>(1, std::min({static_cast<int64_t>(threads), rows, bytes / k_least})));
}

namespace {

// Rows `rows` of `from` into `to`, row by row with memcpy, in gather_parts' parts: the first on this thread, the
// others on Torch's inter-op pool (at::launch: its own threads, whatever intra-op backend this LibTorch has; an
// at::parallel_for here would need this file compiled for the same OpenMP). Returns once every part is done.
// `from` and `to` contiguous and of one dtype; anything else goes through index_select.
void copy_rows(const torch::Tensor& from, const std::vector<int64_t>& rows, const torch::Tensor& index,
               torch::Tensor& to, int threads) {
  const auto n = static_cast<int64_t>(rows.size());
  if (from.dim() == 0 || to.dim() == 0 || !from.is_contiguous() || !to.is_contiguous() ||
      from.scalar_type() != to.scalar_type() || to.size(0) != n) {
    torch::index_select_out(to, from, 0, index);
    return;
  }
  const int64_t row_bytes = from.size(0) > 0 ? static_cast<int64_t>(from.nbytes()) / from.size(0) : 0;
  const auto* src = static_cast<const char*>(from.data_ptr());
  auto* dst = static_cast<char*>(to.data_ptr());
  const auto part = [=, &rows](int64_t first, int64_t last) {
    for (int64_t r = first; r < last; ++r)
      std::memcpy(dst + r * row_bytes, src + rows[static_cast<size_t>(r)] * row_bytes, static_cast<size_t>(row_bytes));
  };
  const int parts = gather_parts(row_bytes * n, n, threads);
  std::vector<std::future<void>> others;
  try {
    for (int p = 1; p < parts; ++p) {
      auto task = std::make_shared<std::packaged_task<void()>>([=] { part(n * p / parts, n * (p + 1) / parts); });
      others.push_back(task->get_future());
      at::launch([task] { (*task)(); });
    }
  } catch (...) {  // the parts already queued read `rows` and write `to`: none may outlive this call
    for (auto& f : others) f.wait();
    throw;
  }
  part(0, n / parts);
  for (auto& f : others) f.get();
}

}  // namespace

void Dataset::gather_into(const std::vector<int64_t>& indices, Batch& out, int threads) const {
  std::vector<int64_t> rows;
  const torch::Tensor index = row_index(indices, m_pool, rows);
  copy_rows(m_inputs, rows, index, out.input, threads);
  if (m_targets.defined()) copy_rows(m_targets, rows, index, out.target, threads);
  else out.target = out.input;
}

Batch Dataset::empty_batch(int64_t rows, bool pinned) const {
  const auto shape = [&](const torch::Tensor& t) {
    std::vector<int64_t> sizes = t.sizes().vec();
    sizes[0] = rows;
    return sizes;
  };
  Batch batch;
  batch.input = torch::empty(shape(m_inputs), m_inputs.options().pinned_memory(pinned));
  batch.target = m_targets.defined() ? torch::empty(shape(m_targets), m_targets.options().pinned_memory(pinned))
                                     : batch.input;
  return batch;
}

// A true division by a 255 that lives on the images' device: a host number (a "CPU scalar") makes CUDA's div
// multiply by its reciprocal instead, which differs from x / 255 by one ulp for 126 of the 256 byte values.
torch::Tensor scale_images(const torch::Tensor& t) {
  if (t.scalar_type() != torch::kUInt8) return t;
  return t.to(torch::kFloat32).div_(torch::full({}, 255.0f, t.options().dtype(torch::kFloat32)));
}

namespace {

// Sum of byte * (position % 251 + 1) over the tensor's bytes, positions from `offset`; at most 255 * 251 per byte,
// so int64 holds it for any batch that fits in memory. Summed by column of a (rows, 251) view first: the weight
// is the column's, and no int64 copy of a large batch is made.
int64_t byte_checksum(const torch::Tensor& t, int64_t offset) {
  const torch::Tensor bytes = t.contiguous().reshape({-1}).view(torch::kUInt8);
  const int64_t n = bytes.numel(), rows = n / 251, tail = n % 251;
  const auto i64 = bytes.options().dtype(torch::kInt64);
  torch::Tensor columns = torch::zeros({251}, i64);
  if (rows > 0) columns += bytes.narrow(0, 0, rows * 251).view({rows, 251}).sum({0}, false, torch::kInt64);
  if (tail > 0) columns.narrow(0, 0, tail) += bytes.narrow(0, rows * 251, tail).to(torch::kInt64);
  const torch::Tensor weights = torch::arange(offset, offset + 251, i64).remainder_(251).add_(1);
  return (columns * weights).sum().item<int64_t>();
}

}  // namespace

int64_t batch_checksum(const Batch& b) {
  int64_t sum = byte_checksum(b.input, 0);
  if (!b.target.is_same(b.input)) sum += byte_checksum(b.target, b.input.numel() * b.input.element_size());
  return sum;
}

namespace {

torch::Tensor read_images(const std::string& path) {
  IdxArray idx = read_idx_file(path);
  if (idx.dims.size() != 3)
    throw hpclaunch::Error(path, "expected N x rows x cols images, got " + std::to_string(idx.dims.size()) + " dims",
                           "pass the *-images-idx3-ubyte.gz file");
  return torch::from_blob(idx.data.data(), idx.dims, torch::kUInt8).clone();  // scaled on the device (scale_images)
}

torch::Tensor read_labels(const std::string& path, int64_t count) {
  IdxArray idx = read_idx_file(path);
  if (idx.dims.size() != 1 || idx.dims[0] != count)
    throw hpclaunch::Error(path, "label count does not match the images (" + std::to_string(count) + ")",
                           "use the labels file of the same split");
  return torch::from_blob(idx.data.data(), idx.dims, torch::kUInt8).to(torch::kInt64);
}

// The rest of DataSplit for a model reading 28x28 grey images.
DataSplit mnist(const TrainOptions& o) {
  DataSplit split;
  const std::string dir = o.data_dir;
  torch::Tensor train_x = read_images(dir + "/train-images-idx3-ubyte.gz");
  torch::Tensor val_x = read_images(dir + "/t10k-images-idx3-ubyte.gz");
  const int64_t n_train = train_x.size(0), n_val = val_x.size(0);
  split.spec.name = o.model;
  if (o.model == "autoencoder") {
    split.spec.features = train_x.size(1) * train_x.size(2);
    split.train = std::make_unique<Dataset>(train_x.reshape({n_train, -1}), torch::Tensor(), n_train);
    split.val = std::make_unique<Dataset>(val_x.reshape({n_val, -1}), torch::Tensor(), n_val);
  } else {
    torch::Tensor train_y = read_labels(dir + "/train-labels-idx1-ubyte.gz", n_train);
    torch::Tensor val_y = read_labels(dir + "/t10k-labels-idx1-ubyte.gz", n_val);
    split.spec.in_channels = 1;
    split.spec.num_classes = 10;
    split.train = std::make_unique<Dataset>(train_x.unsqueeze(1), train_y, n_train);
    split.val = std::make_unique<Dataset>(val_x.unsqueeze(1), val_y, n_val);
  }
  split.description = "Fashion-MNIST from " + dir + " (" + std::to_string(n_train) + " train, " +
                      std::to_string(n_val) + " val)";
  return split;
}

// A pool of generated samples, repeated to `size`, so throughput runs do not measure the generator.
std::unique_ptr<Dataset> synthetic(const TrainOptions& o, int64_t size, uint64_t seed) {
  torch::Generator gen = at::detail::createCPUGenerator(seed);
  if (o.model == "autoencoder") {
    const int64_t pool = std::min<int64_t>(size, 4096);
    return std::make_unique<Dataset>(torch::rand({pool, 784}, gen), torch::Tensor(), size);
  }
  if (o.model == "resnet") {
    const int64_t pool = std::min<int64_t>(size, 64);
    torch::Tensor x = torch::randn({pool, 3, o.image_size, o.image_size}, gen);
    torch::Tensor y = torch::randint(o.num_classes, {pool}, gen, torch::kInt64);
    return std::make_unique<Dataset>(x, y, size);
  }
  const int64_t pool = std::min<int64_t>(size, 4);
  const int64_t c = o.crop;
  torch::Tensor x = torch::randn({pool, 4, c, c, c}, gen);
  torch::Tensor y = torch::rand({pool, 5, c, c, c}, gen).mul_(2.0).sub_(1.0);
  return std::make_unique<Dataset>(x, y, size);
}

}  // namespace

DataSplit load_data(const TrainOptions& o) {
  if (!o.synthetic) return mnist(o);
  DataSplit split;
  split.spec.name = o.model;
  split.spec.num_classes = o.num_classes;
  const int64_t n_val = std::max<int64_t>(o.synthetic_samples / 10, 1);
  split.train = synthetic(o, o.synthetic_samples, o.seed * 2 + 1);
  split.val = synthetic(o, n_val, o.seed * 2 + 2);
  split.description = "synthetic " + o.model + " data (" + std::to_string(o.synthetic_samples) + " train, " +
                      std::to_string(n_val) + " val)";
  return split;
}

}  // namespace hpctrain
