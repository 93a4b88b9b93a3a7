// The GPU step's decisions (gpu_policy.h): refusals as one line naming the flag, the optimizer implementation,
// memory formats, the graph's phases, NCCL's version and the environment a capture needs.
#include <doctest/doctest.h>

#include <map>

#include "gpu_policy.h"
#include "util/error.h"

using namespace hpctrain;

namespace {

std::string refusal(const GpuRun& run) {
  try {
    check_gpu_flags(run);
  } catch (const hpclaunch::Error& e) {
    return e.what();
  }
  return "";
}

GpuRun gpu_graphs() {
  GpuRun run;
  run.cuda = true;
  run.backend = "nccl";
  run.world_size = 2;
  run.cuda_graphs = true;
  return run;
}

}  // namespace

TEST_SUITE_BEGIN("GpuPolicy");

// choose_backend's answer, or its refusal's line.
std::string backend_for(const std::string& requested, bool cuda, int world, BuiltBackends built) {
  try {
    return choose_backend(requested, cuda, world, built);
  } catch (const hpclaunch::Error& e) {
    return e.what();
  }
}

TEST_CASE("backend: auto is NCCL on a GPU and gloo on the CPU; NCCL is refused on the CPU and where not built") {
  const BuiltBackends both{true, true}, cpu_build{true, false};
  CHECK(backend_for("auto", true, 2, both) == "nccl");
  CHECK(backend_for("auto", false, 2, both) == "gloo");
  CHECK(backend_for("gloo", true, 2, both) == "gloo");
  CHECK(backend_for("auto", false, 4, cpu_build) == "gloo");
  CHECK(backend_for("nccl", false, 2, both) ==
        "--backend: nccl needs CUDA tensors but the device is the CPU; use --backend gloo");
  CHECK(backend_for("nccl", true, 2, cpu_build) ==
        "--backend: nccl is not in this build (LibTorch without CUDA); use --backend gloo");
}

TEST_CASE("backend: a build without gloo (a pip wheel's LibTorch) runs NCCL and one CPU rank, and refuses gloo") {
  const BuiltBackends wheel{false, true}, cpu_wheel{false, false};
  CHECK(backend_for("auto", true, 8, wheel) == "nccl");
  CHECK(backend_for("nccl", true, 1, wheel) == "nccl");
  CHECK(backend_for("auto", false, 1, wheel) == "none");  // a world of one forms no process group
  CHECK(backend_for("auto", false, 1, cpu_wheel) == "none");
  CHECK(backend_for("auto", false, 2, wheel) ==
        "--backend: gloo is not in this build (its LibTorch has no gloo headers, as the pip wheels); rebuild with "
        "-DHPCLAUNCH_GLOO_INCLUDE_DIR=DIR naming gloo's headers (docs/trainer.md), or run on GPUs");
  CHECK(backend_for("gloo", false, 1, wheel).rfind("--backend: gloo is not in this build", 0) == 0);
  CHECK(backend_for("gloo", true, 2, wheel) ==
        "--backend: gloo is not in this build (its LibTorch has no gloo headers, as the pip wheels); use --backend "
        "nccl, or rebuild with -DHPCLAUNCH_GLOO_INCLUDE_DIR=DIR (docs/trainer.md)");
}

TEST_CASE("backend: xccl (Intel GPUs) is refused in one line naming what the build has") {
  CHECK(backend_for("xccl", true, 2, BuiltBackends{true, true}) ==
        "--backend: xccl (Intel GPUs) is not in this build: its LibTorch has no XPU (this build has gloo, nccl); run "
        "a torch XPU script under `hpclaunch agent` or `hpclaunch exec`, or use a backend this build has");
  CHECK(backend_for("xccl", false, 1, BuiltBackends{false, false}).find("(this build has no collectives: one CPU rank)") !=
        std::string::npos);
}

TEST_CASE("GPU flags on the CPU are refused, naming the flag") {
  GpuRun cpu;
  CHECK(refusal(cpu).empty());
  cpu.amp = true;
  CHECK(refusal(cpu) == "--amp: only for CUDA devices and this run is on the CPU; drop the flag on CPU runs");
  cpu.amp = false;
  cpu.channels_last = true;
  CHECK(refusal(cpu).rfind("--channels-last: only for CUDA devices", 0) == 0);
  cpu.channels_last = false;
  cpu.cuda_graphs = true;
  CHECK(refusal(cpu).rfind("--cuda-graphs: only for CUDA devices", 0) == 0);
}

TEST_CASE("--cuda-graphs: NCCL and a world of one gloo rank may capture; gloo across ranks, skip-step, loop may not") {
  GpuRun run = gpu_graphs();
  CHECK(refusal(run).empty());
  run.amp = run.channels_last = true;
  CHECK(refusal(run).empty());
  run.backend = "gloo";
  CHECK(refusal(run).rfind("--cuda-graphs: gloo's collectives run on CPU threads", 0) == 0);
  run.world_size = 1;  // no collective at all
  CHECK(refusal(run).empty());
  run = gpu_graphs();
  run.on_nonfinite = "skip-step";
  CHECK(refusal(run).find("--on-nonfinite skip-step") != std::string::npos);
  run = gpu_graphs();
  run.optimizer_impl = "loop";
  CHECK(refusal(run).find("use --optimizer-impl foreach") != std::string::npos);
  for (const GpuRun& r : {gpu_graphs()}) CHECK(refusal(r).find('\n') == std::string::npos);
}

TEST_CASE("optimizer implementation: foreach on a GPU, loop on the CPU, unless asked") {
  GpuRun run;
  CHECK(choose_optimizer_impl(run) == OptimizerImpl::loop);
  run.optimizer_impl = "foreach";
  CHECK(choose_optimizer_impl(run) == OptimizerImpl::foreach);
  run.cuda = true;
  run.optimizer_impl = "auto";
  CHECK(choose_optimizer_impl(run) == OptimizerImpl::foreach);
  run.optimizer_impl = "loop";
  CHECK(choose_optimizer_impl(run) == OptimizerImpl::loop);
}

TEST_CASE("channels-last: 4-d NHWC, 5-d NDHWC, everything else as it is") {
  CHECK(memory_format_for(4, false) == MemoryFormat::contiguous);
  CHECK(memory_format_for(4, true) == MemoryFormat::channels_last);
  CHECK(memory_format_for(5, true) == MemoryFormat::channels_last_3d);
  CHECK(memory_format_for(2, true) == MemoryFormat::contiguous);
  CHECK(memory_format_for(1, true) == MemoryFormat::contiguous);
}

TEST_CASE("graph phases: eager without graphs; warm-up steps, one capture, then replays") {
  CHECK(graph_phase(false, 0) == GraphPhase::eager);
  CHECK(graph_phase(false, 100) == GraphPhase::eager);
  for (int64_t i = 0; i < k_graph_warmup_steps; ++i) CHECK(graph_phase(true, i) == GraphPhase::warmup);
  CHECK(graph_phase(true, k_graph_warmup_steps) == GraphPhase::capture);
  CHECK(graph_phase(true, k_graph_warmup_steps + 1) == GraphPhase::replay);
  CHECK(graph_phase(true, 1000) == GraphPhase::replay);
}

TEST_CASE("NCCL captures from 2.9.6, in every encoding of its version") {
  CHECK_FALSE(nccl_can_be_captured(2804));   // 2.8.4, the old encoding
  CHECK_FALSE(nccl_can_be_captured(20905));  // 2.9.5
  CHECK(nccl_can_be_captured(20906));        // 2.9.6
  CHECK(nccl_can_be_captured(21801));        // 2.18.1
  CHECK(nccl_version_text(21801) == "2.18.1");
  CHECK(nccl_version_text(2804) == "2.8.4");
  const int64_t packed = (int64_t{2} << 32) | (int64_t{21} << 16) | 5;  // 2.21.5 as major<<32|minor<<16|patch
  CHECK(nccl_can_be_captured(packed));
  CHECK(nccl_version_text(packed) == "2.21.5");
  CHECK_FALSE(nccl_can_be_captured((int64_t{2} << 32) | (int64_t{9} << 16) | 5));
  CHECK_FALSE(nccl_can_be_captured(0));  // no NCCL
}

TEST_CASE("a capture with NCCL across ranks turns NCCL's async error handling off, and refuses a user's 1") {
  std::map<std::string, std::string> vars;
  auto getenv = [&](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
  GpuRun run = gpu_graphs();
  // Only the name this LibTorch reads is set: 2.2 and later warn about the deprecated one whenever it is set.
  using Set = std::vector<std::pair<std::string, std::string>>;
  CHECK(nccl_capture_environment(run, getenv, true) == Set{{"TORCH_NCCL_ASYNC_ERROR_HANDLING", "0"}});
  CHECK(nccl_capture_environment(run, getenv, false) == Set{{"NCCL_ASYNC_ERROR_HANDLING", "0"}});
  vars["NCCL_ASYNC_ERROR_HANDLING"] = "0";
  CHECK(nccl_capture_environment(run, getenv, true).size() == 1);
  vars["NCCL_ASYNC_ERROR_HANDLING"] = "1";  // a user's old name is still refused under a new LibTorch
  CHECK_THROWS_WITH(nccl_capture_environment(run, getenv, true),
                    doctest::Contains("NCCL_ASYNC_ERROR_HANDLING: is 1, but a captured step"));
  vars["NCCL_ASYNC_ERROR_HANDLING"] = "0";
  vars["TORCH_NCCL_ASYNC_ERROR_HANDLING"] = "1";
  CHECK_THROWS_WITH(nccl_capture_environment(run, getenv, false),
                    doctest::Contains("TORCH_NCCL_ASYNC_ERROR_HANDLING: is 1, but a captured step"));
  run.world_size = 1;
  CHECK(nccl_capture_environment(run, getenv, true).empty());
  run = gpu_graphs();
  run.cuda_graphs = false;
  CHECK(nccl_capture_environment(run, getenv, true).empty());
}

TEST_SUITE_END();
