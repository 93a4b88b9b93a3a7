// Test tool, the proof that the variables hpclaunch sets work: every rank joins a LibTorch gloo process group
// through TCPStore(MASTER_ADDR, MASTER_PORT) with RANK and WORLD_SIZE, allreduces (rank + 1) and checks the
// sum is WORLD_SIZE * (WORLD_SIZE + 1) / 2. Prints one line per rank; exit 1 on a wrong sum or a bad variable.
// ALLREDUCE_CHECK_HOST, if set, is the name gloo binds to (the emulated node's own loopback address).
#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

namespace {

std::string need(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) throw std::runtime_error(std::string(name) + " is not set");
  return v;
}

int need_int(const char* name) { return std::stoi(need(name)); }

}  // namespace

int main() {
  try {
    const int rank = need_int("RANK");
    const int world = need_int("WORLD_SIZE");
    const std::string addr = need("MASTER_ADDR");
    const int port = need_int("MASTER_PORT");
    const char* local = std::getenv("LOCAL_RANK");

    c10d::TCPStoreOptions store_options;
    store_options.port = static_cast<std::uint16_t>(port);
    store_options.isServer = rank == 0;
    store_options.numWorkers = static_cast<std::size_t>(world);
    store_options.waitWorkers = true;  // every rank checks in; the server waits for all of them
    store_options.timeout = std::chrono::seconds(60);
    auto store = c10::make_intrusive<c10d::TCPStore>(addr, store_options);

    auto options = c10d::ProcessGroupGloo::Options::create();
    const char* host = std::getenv("ALLREDUCE_CHECK_HOST");
    options->devices.push_back(host && *host ? c10d::ProcessGroupGloo::createDeviceForHostname(host)
                                             : c10d::ProcessGroupGloo::createDefaultDevice());
    options->timeout = std::chrono::seconds(60);
    c10d::ProcessGroupGloo group(store, rank, world, options);

    std::vector<at::Tensor> tensors = {at::full({4}, static_cast<double>(rank + 1), at::kDouble)};
    group.allreduce(tensors)->wait();
    const double expected = world * (world + 1) / 2.0;
    const double got = tensors[0][0].item<double>();
    const bool ok = got == expected && tensors[0].eq(expected).all().item<bool>();
    std::printf("allreduce rank=%d local_rank=%s world=%d master=%s:%d sum=%.0f expected=%.0f %s\n", rank,
                local ? local : "?", world, addr.c_str(), port, got, expected, ok ? "ok" : "WRONG");
    std::fflush(stdout);
    group.barrier()->wait();  // rank 0 holds the store: leave together
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "allreduce_check: error: %s\n", e.what());
    return 1;
  }
}
