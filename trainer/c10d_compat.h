// The one place that knows how c10d and autograd differ between LibTorch 1.13 (Debian, CPU) and 2.x (the CUDA
// wheels, 2.15 tested): in 2.x ProcessGroupGloo/NCCL derive from c10d::Backend, in 1.13 from c10d::ProcessGroup;
// the handle to a gradient accumulator changed type in 2.15 (NodePtr). Everything else
// (TCPStore, PrefixStore, Work, the gloo device factories) is the same in both, but for TCPStore's libuv server
// (below). Built and tested against the torch 2.15 wheel by t0513 and t0509. gloo is compiled in where its headers were
// found (HPCTRAIN_WITH_GLOO: trainer/CMakeLists.txt; the pip wheels ship none), NCCL with a CUDA LibTorch.
#pragma once
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>  // Backend (2.x), Work: what the gloo header brought too
#if defined(HPCTRAIN_WITH_GLOO)
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#include <torch/csrc/autograd/variable.h>  // grad_accumulator
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/version.h>
#if defined(HPCTRAIN_WITH_NCCL)
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
// The nccl.h compiled here must be the one configure compared with the NCCL torch loads: a header of another
// version lays the process group's options out differently, and nothing else would notice.
#if defined(HPCTRAIN_NCCL_HEADER_MAJOR)
static_assert(NCCL_MAJOR == HPCTRAIN_NCCL_HEADER_MAJOR && NCCL_MINOR == HPCTRAIN_NCCL_HEADER_MINOR &&
                  NCCL_PATCH == HPCTRAIN_NCCL_HEADER_PATCH,
              "this nccl.h is not the one trainer/CMakeLists.txt checked (HPCTRAIN_NCCL_INCLUDE_DIR)");
#endif
#endif

#include <chrono>
#include <cstdlib>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace hpctrain::compat {

#if TORCH_VERSION_MAJOR >= 2
using Backend = c10d::Backend;
#else
using Backend = c10d::ProcessGroup;
#endif
using BackendPtr = c10::intrusive_ptr<Backend>;
using WorkPtr = c10::intrusive_ptr<c10d::Work>;
using StorePtr = c10::intrusive_ptr<c10d::Store>;
// The owning handle to a parameter's gradient accumulator: std::shared_ptr<Node> in 1.13 and 2.x until autograd's
// nodes became intrusive, c10::intrusive_ptr<Node> in 2.15. Taken from the function itself.
using NodePtr = decltype(torch::autograd::impl::grad_accumulator(std::declval<const at::Tensor&>()));

inline constexpr bool k_have_nccl =
#if defined(HPCTRAIN_WITH_NCCL)
    true;
#else
    false;
#endif
inline constexpr bool k_have_gloo =
#if defined(HPCTRAIN_WITH_GLOO)
    true;
#else
    false;
#endif

// TCPStoreOptions::useLibUV: there from 2.2, true by default from 2.4, absent in 1.13.
template <typename Options, typename = void>
struct has_use_libuv : std::false_type {};
template <typename Options>
struct has_use_libuv<Options, std::void_t<decltype(std::declval<Options&>().useLibUV)>> : std::true_type {};

// Whether to ask for the libuv store server, as torch.distributed decides it: USE_LIBUV unset or "1".
inline bool libuv_requested(const char* use_libuv) {
  return use_libuv == nullptr || std::string_view(use_libuv) == "1";
}

// A LibTorch built without libuv (Debian's 2.6, the Windows wheels) refuses useLibUV=true before it binds
// anything ("use_libuv was requested but PyTorch was build[sic] without libuv support"), where Python's users must
// set USE_LIBUV=0. The trainer takes the classic server then: same protocol, same clients. A template, so that
// 1.13's options (no useLibUV) never see the libuv branch.
template <typename Options>
StorePtr make_tcp_store_from(const std::string& host, Options options) {
  if constexpr (has_use_libuv<Options>::value) {
    options.useLibUV = libuv_requested(std::getenv("USE_LIBUV"));
    if (options.useLibUV) {
      try {
        return c10::make_intrusive<c10d::TCPStore>(host, options);
      } catch (const c10::Error& e) {
        if (std::string_view(e.what()).find("without libuv") == std::string_view::npos) throw;
        options.useLibUV = false;
      }
    }
  }
  return c10::make_intrusive<c10d::TCPStore>(host, options);
}

inline StorePtr make_tcp_store(const std::string& host, int port, bool is_server, int world_size,
                               std::chrono::milliseconds timeout) {
  c10d::TCPStoreOptions options;
  options.port = static_cast<std::uint16_t>(port);
  options.isServer = is_server;
  options.numWorkers = static_cast<std::size_t>(world_size);
  options.waitWorkers = true;  // clients count themselves in; the server waits for all
  options.timeout = timeout;
  return make_tcp_store_from(host, options);
}

inline StorePtr make_prefix_store(const std::string& prefix, StorePtr store) {
  return c10::make_intrusive<c10d::PrefixStore>(prefix, std::move(store));
}

// `interface`: GLOO_SOCKET_IFNAME's value, or empty. Loopback masters bind gloo to 127.0.0.1 (tests, one host).
// Without gloo it returns nothing: choose_backend (gpu_policy.h) has refused gloo before.
inline BackendPtr make_gloo([[maybe_unused]] StorePtr store, [[maybe_unused]] int rank, [[maybe_unused]] int size,
                            [[maybe_unused]] const std::string& interface, [[maybe_unused]] bool loopback,
                            [[maybe_unused]] std::chrono::milliseconds timeout) {
#if !defined(HPCTRAIN_WITH_GLOO)
  return {};
#else
  auto options = c10d::ProcessGroupGloo::Options::create(timeout);
  if (!interface.empty()) options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(interface));
  else if (loopback) options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  else options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, options);
#endif
}

inline BackendPtr make_nccl([[maybe_unused]] StorePtr store, [[maybe_unused]] int rank, [[maybe_unused]] int size,
                            [[maybe_unused]] std::chrono::milliseconds timeout) {
#if defined(HPCTRAIN_WITH_NCCL)
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = timeout;
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, size, options);
#else
  return {};
#endif
}

}  // namespace hpctrain::compat
