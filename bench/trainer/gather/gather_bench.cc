// How fast can the host gather a batch for the GPU? The trainer's input path (trainer/loader.h) gathers each batch
// in a loader thread into a pinned buffer, and the first H200 run (results/gpu-h200-2026-11-28) found ResNet-18 at
// batch 256 waiting for it: 154 MB of float images a step. This times ways of gathering the same rows from a side
// thread, as the loader does, and the copy to the GPU, on whatever machine runs it (bench/trainer/gather/run.sh).
#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// The best of `reps` timings of `f`, in milliseconds.
template <class F>
double best_ms(int reps, F&& f) {
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    const auto t = Clock::now();
    f();
    best = std::min(best, ms_since(t));
  }
  return best;
}
}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::stoi(argv[1]) : static_cast<int>(std::thread::hardware_concurrency());
  const int64_t batch = argc > 2 ? std::stoll(argv[2]) : 256;
  torch::set_num_threads(threads);
  const bool cuda = torch::cuda::is_available();
  const torch::Tensor pool = torch::randn({64, 3, 224, 224});
  torch::Tensor out = torch::empty({batch, 3, 224, 224}, torch::TensorOptions().pinned_memory(cuda));
  torch::Tensor pageable = torch::empty({batch, 3, 224, 224});
  std::vector<int64_t> rows(static_cast<size_t>(batch));
  for (int64_t i = 0; i < batch; ++i) rows[static_cast<size_t>(i)] = (i * 37) % 64;
  const torch::Tensor index = torch::from_blob(rows.data(), {batch}, torch::kInt64);
  const int64_t row_bytes = pool[0].numel() * static_cast<int64_t>(sizeof(float));
  const auto* src = static_cast<const char*>(pool.data_ptr());
  const double mb = static_cast<double>(out.nbytes()) / 1e6;
  std::printf("gather_bench: %lld rows of %.2f MB (%.0f MB), %d intra-op threads, %u CPUs, pinned %s\n",
              static_cast<long long>(batch), static_cast<double>(row_bytes) / 1e6, mb, threads,
              std::thread::hardware_concurrency(), cuda ? "yes" : "no (no GPU)");
  auto report = [&](const char* what, double ms) {
    std::printf("  %-44s %8.2f ms  %6.1f GB/s\n", what, ms, mb / ms);
  };
  // Rows [first, last) copied by memcpy into `dst`.
  auto copy_rows = [&](char* dst, int64_t first, int64_t last) {
    for (int64_t r = first; r < last; ++r)
      std::memcpy(dst + r * row_bytes, src + rows[static_cast<size_t>(r)] * row_bytes, static_cast<size_t>(row_bytes));
  };
  std::thread side([&] {  // everything from a thread that is not the main one, as the loader's
    char* dst = static_cast<char*>(out.data_ptr());
    report("index_select_out into pinned (the loader)", best_ms(5, [&] { torch::index_select_out(out, pool, 0, index); }));
    report("index_select_out into pageable", best_ms(5, [&] { torch::index_select_out(pageable, pool, 0, index); }));
    report("memcpy per row, one thread", best_ms(5, [&] { copy_rows(dst, 0, batch); }));
    report("at::parallel_for over rows, memcpy each", best_ms(5, [&] {
      at::parallel_for(0, batch, 1, [&](int64_t b, int64_t e) { copy_rows(dst, b, e); });
    }));
    for (int n : {2, 4, 8, 16}) {
      if (n > static_cast<int>(std::thread::hardware_concurrency())) break;
      const std::string what = "memcpy by " + std::to_string(n) + " std::threads (row ranges)";
      report(what.c_str(), best_ms(5, [&] {
        std::vector<std::thread> team;
        for (int t = 0; t < n; ++t)
          team.emplace_back([&, t] { copy_rows(dst, batch * t / n, batch * (t + 1) / n); });
        for (auto& th : team) th.join();
      }));
    }
    if (cuda) {
      torch::Tensor d = torch::empty(out.sizes(), torch::TensorOptions().device(torch::kCUDA));
      report("copy to the GPU from pinned (H2D)", best_ms(5, [&] {
        d.copy_(out, /*non_blocking=*/true);
        torch::cuda::synchronize();
      }));
      report("copy to the GPU from pageable (H2D)", best_ms(5, [&] {
        d.copy_(pageable, /*non_blocking=*/false);
        torch::cuda::synchronize();
      }));
    }
  });
  side.join();
  return 0;
}
