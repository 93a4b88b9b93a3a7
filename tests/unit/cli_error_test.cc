// The programs' one CLI11 parse and one main() wrapper (util/cli_error.h): what a parse returns and throws, and
// what an error prints and exits with.
#include <doctest/doctest.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "util/cli_error.h"
#include "util/error.h"

namespace cli_error_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

namespace {

struct Flags {
  int nodes = 1;
  CLI::App app{"test program", "prog"};
  Flags() {
    app.add_option("--nodes", nodes, "nodes");
    app.set_version_flag("--version", "prog 1.0");
  }
};

// What run_main printed to its error stream.
std::string printed(std::FILE* f) {
  std::rewind(f);
  std::string out;
  for (int c = std::fgetc(f); c != EOF; c = std::fgetc(f)) out += static_cast<char>(c);
  return out;
}

}  // namespace

TEST_CASE("parse_cli reads the flags in order and says when help or the version was asked for") {
  Flags f;
  CHECK(parse_cli(f.app, {"--nodes", "4"}, "prog") == Parsed::flags);
  CHECK(f.nodes == 4);
  Flags help;
  CHECK(parse_cli(help.app, {"--help"}, "prog") == Parsed::help);
  Flags version;
  CHECK(parse_cli(version.app, {"--version"}, "prog") == Parsed::version);
}

TEST_CASE("parse_cli throws CLI11's complaints as one Error naming the flag") {
  Flags f;
  try {
    parse_cli(f.app, {"--nodes", "two"}, "prog");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == "--nodes: 'two' is not a valid value; see `prog --help`");
    CHECK(e.exit_code() == k_exit_bad_input);
  }
  Flags g;
  try {
    parse_cli(g.app, {"--node", "2"}, "prog");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).rfind("--node: unknown option (did you mean '--nodes'?)", 0) == 0);
  }
}

TEST_CASE("run_main prints an error once and returns its exit code") {
  std::FILE* err = std::tmpfile();
  REQUIRE(err != nullptr);
  CHECK(run_main("prog", [] { return 7; }, err) == 7);
  CHECK(printed(err).empty());
  CHECK(run_main("prog", []() -> int { throw Error("--nodes", "is zero", "pass 1 or more"); }, err) == 2);
  CHECK(printed(err) == "prog: error: --nodes: is zero; pass 1 or more\n");
  std::fclose(err);
  err = std::tmpfile();
  CHECK(run_main("prog", []() -> int { throw failure("job.yaml", "cannot write"); }, err) == 1);
  CHECK(printed(err) == "prog: error: job.yaml: cannot write\n");
  std::fclose(err);
  // Any other exception: its first line (LibTorch's errors carry a backtrace after it), exit 1.
  err = std::tmpfile();
  CHECK(run_main("prog", []() -> int { throw std::runtime_error("CUDA error\nframe #0: ...\nframe #1: ..."); }, err) == 1);
  CHECK(printed(err) == "prog: error: CUDA error\n");
  std::fclose(err);
}

}  // namespace cli_error_test
