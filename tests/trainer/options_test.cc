// Command line and distributed environment: defaults, model defaults, conflicts, tools, env variables.
#include <doctest/doctest.h>
#include <torch/version.h>

#include <cstdlib>
#include <functional>
#include <map>

#include "options.h"
#include "util/error.h"

using namespace hpctrain;

namespace {

// The message of the hpclaunch::Error that `parse` (parse_command_line by default) throws on `args`, or "".
std::string error_of(const std::vector<std::string>& args,
                     const std::function<void(const std::vector<std::string>&)>& parse = parse_command_line) {
  try {
    parse(args);
  } catch (const hpclaunch::Error& e) {
    return e.what();
  }
  return "";
}

DistEnv env_of(const std::map<std::string, std::string>& vars) {
  return read_dist_env([&](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

}  // namespace

TEST_SUITE_BEGIN("Options");

TEST_CASE("no flags: the auto-encoder on Fashion-MNIST with the seed's batch and Adam learning rate") {
  const Invocation inv = parse_command_line({});
  CHECK(inv.command == Command::train);
  CHECK(inv.options.model == "autoencoder");
  CHECK(inv.options.batch_size == 128);
  CHECK(inv.options.lr == doctest::Approx(1e-3));
  CHECK_FALSE(inv.options.synthetic);
  CHECK_FALSE(inv.options.explicit_batch);
  CHECK(inv.options.spin_wait_us == 5000);
}

TEST_CASE("flags are read; unet3d implies synthetic data; SGD defaults to lr 0.1") {
  const Invocation inv = parse_command_line({"--model", "unet3d", "--crop", "32", "--global-batch-size", "8",
                                             "--optimizer", "sgd", "--lr-scaling", "sqrt", "--steps", "5",
                                             "--no-validation", "--threads", "2", "--spin-wait-us", "0"});
  const TrainOptions& o = inv.options;
  CHECK(o.model == "unet3d");
  CHECK(o.synthetic);
  CHECK(o.crop == 32);
  CHECK(o.global_batch == 8);
  CHECK(o.batch_size == 0);
  CHECK(o.explicit_batch);
  CHECK(o.lr == doctest::Approx(0.1));
  CHECK(o.lr_scaling == "sqrt");
  CHECK(o.max_steps == 5);
  CHECK_FALSE(o.validate);
  CHECK(o.threads == 2);
  CHECK(o.spin_wait_us == 0);
}

TEST_CASE("bad input names the flag and what to do") {
  CHECK(error_of({"--batch-size", "4", "--global-batch-size", "8"}) ==
        "--batch-size: given together with --global-batch-size; pass only one of them");
  CHECK(error_of({"--resume"}) ==
        "--resume: needs --checkpoint-dir; pass --checkpoint-dir DIR (latest.pt is read from it)");
  CHECK(error_of({"--model", "unet3d", "--crop", "24"}).rfind("--crop: 24 is not a multiple of 16", 0) == 0);
  CHECK(error_of({"--model", "vgg"}).find("--model") != std::string::npos);
  CHECK(error_of({"--bogus"}).find("--bogus") != std::string::npos);
  CHECK(error_of({"--resnet-depth", "19"}).find("--resnet-depth") != std::string::npos);
  CHECK(error_of({"--spin-wait-us", "-1"}).find("--spin-wait-us") != std::string::npos);
}

TEST_CASE("--help and --version are commands, not errors") {
  CHECK(parse_command_line({"--help"}).command == Command::help);
  CHECK(parse_command_line({"--help"}).help_text.find("--global-batch-size") != std::string::npos);
  CHECK(parse_command_line({"--version"}).command == Command::version);
  // It names the LibTorch the trainer was built against (the one in a bug report is rarely the one assumed).
  const std::string version = parse_command_line({"--version"}).help_text;
  CHECK(version.find(" (LibTorch " + std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) +
                     ".") != std::string::npos);
}

TEST_CASE("--version names the NCCL loaded at run time beside the header's, where one is loaded") {
  const std::string built = version_line("hpclaunch-train", 0);
  CHECK(built.rfind("hpclaunch-train ", 0) == 0);
  CHECK(built.find(" loaded") == std::string::npos);
  CHECK(built.back() == ')');
  // ncclGetVersion's code for 2.28.9; a CPU LibTorch's build names no header, so the loaded NCCL comes alone.
  const std::string loaded = version_line("hpclaunch-probe", 22809);
  CHECK(loaded.rfind("hpclaunch-probe ", 0) == 0);
  CHECK(loaded == "hpclaunch-probe" + built.substr(built.find(' '), built.size() - built.find(' ') - 1) +
                      (built.find(" NCCL ") == std::string::npos ? ", NCCL " : ", ") + "2.28.9 loaded)");
}

TEST_CASE("hpclaunch-probe's flags: defaults, values, the sweep's bounds, the environment's stand-ins") {
  const ProbeOptions d = parse_probe_command_line({}).options;
  CHECK(parse_probe_command_line({}).command == Command::train);
  CHECK(d.min_bytes == 8);
  CHECK(d.max_bytes == 256u << 20);
  CHECK(d.backend == "auto");
  const ProbeOptions o = parse_probe_command_line({"--min-bytes", "64", "--max-bytes", "4096", "--expect-gpus", "4",
                                                   "--slow-factor", "3", "--expect-busbw", "20", "--json", "p.json",
                                                   "--backend", "gloo"}).options;
  CHECK(o.min_bytes == 64);
  CHECK(o.max_bytes == 4096);
  CHECK(o.expect_gpus == 4);
  CHECK(o.slow_factor == 3.0);
  CHECK(o.expect_busbw == 20.0);
  CHECK(o.json == "p.json");
  CHECK(o.backend == "gloo");
  const auto probe_error = [](const std::vector<std::string>& args) { return error_of(args, parse_probe_command_line); };
  CHECK(probe_error({"--min-bytes", "8192", "--max-bytes", "4096"}) == "--min-bytes: is above --max-bytes; swap them");
  CHECK(probe_error({"--backend", "mpi"}).rfind("--backend: ", 0) == 0);
  CHECK(probe_error({"--slow-factor", "0.5"}).rfind("--slow-factor: ", 0) == 0);
  CHECK(parse_probe_command_line({"--help"}).help_text.find("--expect-busbw") != std::string::npos);
  CHECK(parse_probe_command_line({"--version"}).command == Command::version);
  ::setenv("HPCLAUNCH_CHECK_MAX_BYTES", "2048", 1);
  ::setenv("HPCLAUNCH_CHECK_SLOW_FACTOR", "5", 1);
  const ProbeOptions e = parse_probe_command_line({}).options;
  ::unsetenv("HPCLAUNCH_CHECK_MAX_BYTES");
  ::unsetenv("HPCLAUNCH_CHECK_SLOW_FACTOR");
  CHECK(e.max_bytes == 2048);
  CHECK(e.slow_factor == 5.0);
}

TEST_CASE("inspect and compare take checkpoint files and a tolerance") {
  Invocation inv = parse_command_line({"compare", "a.pt", "b.pt", "--tolerance", "1e-4"});
  CHECK(inv.command == Command::compare);
  CHECK(inv.files == std::vector<std::string>{"a.pt", "b.pt"});
  CHECK(inv.tolerance == doctest::Approx(1e-4));
  CHECK(parse_command_line({"inspect", "x.pt"}).files.size() == 1);
  CHECK(error_of({"compare", "a.pt"}).rfind("compare: expects 2 checkpoint file(s), got 1", 0) == 0);
}

TEST_CASE("without launcher variables the trainer is a world of one") {
  const DistEnv env = env_of({});
  CHECK(env.world_size == 1);
  CHECK(env.rank == 0);
  CHECK(env.local_rank == 0);
  CHECK_FALSE(env.agent_store);
}

TEST_CASE("the torchrun variables are read") {
  const DistEnv env = env_of({{"WORLD_SIZE", "8"}, {"RANK", "5"}, {"LOCAL_RANK", "1"}, {"MASTER_ADDR", "n1"},
                              {"MASTER_PORT", "29501"}, {"TORCHELASTIC_USE_AGENT_STORE", "True"},
                              {"TORCHELASTIC_RESTART_COUNT", "2"}});
  CHECK(env.world_size == 8);
  CHECK(env.rank == 5);
  CHECK(env.local_rank == 1);
  CHECK(env.master_addr == "n1");
  CHECK(env.master_port == 29501);
  CHECK(env.agent_store);
  CHECK(env.restart_count == "2");
}

TEST_CASE("an incomplete or inconsistent environment names the variable") {
  auto error = [](const std::map<std::string, std::string>& vars) {
    try {
      env_of(vars);
    } catch (const hpclaunch::Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error({{"WORLD_SIZE", "2"}, {"RANK", "0"}, {"MASTER_PORT", "1"}}).rfind("MASTER_ADDR: unset", 0) == 0);
  CHECK(error({{"WORLD_SIZE", "2"}, {"RANK", "2"}, {"MASTER_ADDR", "a"}, {"MASTER_PORT", "1"}})
            .rfind("RANK: '2' is not an integer in [0, 1]", 0) == 0);
  CHECK(error({{"WORLD_SIZE", "x"}}).rfind("WORLD_SIZE: 'x'", 0) == 0);
  CHECK(error({{"WORLD_SIZE", "2"}, {"MASTER_ADDR", "a"}, {"MASTER_PORT", "1"}}).rfind("RANK: unset", 0) == 0);
}


TEST_CASE("non-finite policy: stop by default; skip-step with a limit of skipped steps in a row") {
  CHECK(parse_command_line({}).options.on_nonfinite == "stop");
  CHECK(parse_command_line({}).options.max_skipped_steps == 10);
  const TrainOptions o = parse_command_line({"--on-nonfinite", "skip-step", "--max-skipped-steps", "3"}).options;
  CHECK(o.on_nonfinite == "skip-step");
  CHECK(o.max_skipped_steps == 3);
  CHECK(error_of({"--on-nonfinite", "ignore"}).find("--on-nonfinite") != std::string::npos);
  CHECK(error_of({"--max-skipped-steps", "0"}).find("--max-skipped-steps") != std::string::npos);
}

TEST_CASE("the non-finite test hook: RANK:STEP[:COUNT], off when unset, one line when malformed") {
  CHECK(parse_nonfinite_hook(nullptr).rank == -1);
  CHECK_FALSE(parse_nonfinite_hook("").applies(0, 1));
  const NonfiniteHook once = parse_nonfinite_hook("1:5");
  CHECK(once.applies(1, 5));
  CHECK_FALSE(once.applies(1, 6));
  CHECK_FALSE(once.applies(0, 5));
  const NonfiniteHook three = parse_nonfinite_hook("0:2:3");
  CHECK_FALSE(three.applies(0, 1));
  CHECK(three.applies(0, 4));
  CHECK_FALSE(three.applies(0, 5));
  for (const char* bad : {"1", "x:1", "1:0", "-1:3", "1:2:0", "1:2:3:4", "1:2x"})
    CHECK_THROWS_WITH(parse_nonfinite_hook(bad), doctest::Contains("HPCLAUNCH_TRAIN_NONFINITE: '"));
}

TEST_CASE("threads per rank: the flag, else OMP_NUM_THREADS, else the CPUs shared by the node's ranks") {
  std::map<std::string, std::string> vars;
  auto getenv = [&](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
  CHECK(threads_per_rank(3, 16, getenv) == 3);
  CHECK(threads_per_rank(0, 16, getenv) == 16);
  vars["LOCAL_WORLD_SIZE"] = "4";
  CHECK(threads_per_rank(0, 16, getenv) == 4);
  CHECK(threads_per_rank(0, 2, getenv) == 1);  // more ranks than CPUs: one thread each
  vars["OMP_NUM_THREADS"] = "6";
  CHECK(threads_per_rank(0, 16, getenv) == 6);
  CHECK(threads_per_rank(2, 16, getenv) == 2);
  vars["OMP_NUM_THREADS"] = "4,2";  // nested lists are not ours to read: the share instead
  CHECK(threads_per_rank(0, 16, getenv) == 4);
}


TEST_CASE("test hooks come from the environment once, into the options; bad values name the variable") {
  std::map<std::string, std::string> vars;
  auto read = [&] {
    return read_test_hooks([&](const char* name) -> const char* {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    });
  };
  TestHooks none = read();
  CHECK(none.step_sleep_ms == 0);
  CHECK(none.nonfinite.rank == -1);
  vars = {{"HPCLAUNCH_TRAIN_STEP_SLEEP_MS", "250"}, {"HPCLAUNCH_TRAIN_NONFINITE", "1:5:2"}};
  const TestHooks hooks = read();
  CHECK(hooks.step_sleep_ms == 250);
  CHECK(hooks.nonfinite.applies(1, 6));
  CHECK_FALSE(hooks.nonfinite.applies(1, 7));
  vars = {{"HPCLAUNCH_TRAIN_STEP_SLEEP_MS", "soon"}};
  CHECK_THROWS_WITH(read(), doctest::Contains("HPCLAUNCH_TRAIN_STEP_SLEEP_MS: 'soon' is not a number of milliseconds"));
  CHECK(none.stale_batch_step == 0);
  vars = {{"HPCLAUNCH_TRAIN_STALE_BATCH", "3"}};
  CHECK(read().stale_batch_step == 3);
  vars = {{"HPCLAUNCH_TRAIN_STALE_BATCH", "1"}};  // step 1 has no step before it
  CHECK_THROWS_WITH(read(), doctest::Contains("HPCLAUNCH_TRAIN_STALE_BATCH: '1' is not a step number of 2 or more"));
  CHECK_FALSE(none.resident_batch);
  vars = {{"HPCLAUNCH_TRAIN_RESIDENT_BATCH", "1"}};
  CHECK(read().resident_batch);
  vars = {{"HPCLAUNCH_TRAIN_RESIDENT_BATCH", "0"}};
  CHECK_FALSE(read().resident_batch);
  vars = {{"HPCLAUNCH_TRAIN_RESIDENT_BATCH", "2"}};
  CHECK_THROWS_WITH(read(), doctest::Contains("HPCLAUNCH_TRAIN_RESIDENT_BATCH: '2' is not 0 or 1"));
}

TEST_SUITE_END();
