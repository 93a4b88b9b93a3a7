// `hpclaunch check [ARGS]`: the preflight, run as a job's command on every rank (`submit ... -- hpclaunch check`):
// execs hpclaunch-probe (built with the trainer against LibTorch) from beside this binary.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "cli/commands.h"
#include "util/error.h"
#include "util/command.h"

namespace hpclaunch {

namespace {

namespace fs = std::filesystem;

// $HPCLAUNCH_PROBE, else hpclaunch-probe beside this binary (an install's bin/), else in the build tree's trainer/.
std::string find_probe() {
  if (const char* p = std::getenv("HPCLAUNCH_PROBE"); p && *p) return p;
  fs::path self = fs::path(self_executable()).parent_path();
  std::error_code ec;
  for (const fs::path& c : {self / "hpclaunch-probe", self.parent_path() / "trainer" / "hpclaunch-probe"})
    if (fs::exists(c, ec)) return c.string();
  throw failure("hpclaunch check", "hpclaunch-probe is not beside " + self.string(),
                "build hpclaunch with LibTorch (the trainer), install both, or set HPCLAUNCH_PROBE");
}

}  // namespace

int cmd_check(const Args& args) {
  std::string probe = find_probe();
  std::vector<char*> argv;
  argv.push_back(probe.data());
  std::vector<std::string> copy(args.begin(), args.end());
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::execv(probe.c_str(), argv.data());
  throw failure(probe, std::string("cannot run: ") + std::strerror(errno), "check that it is executable");
}

}  // namespace hpclaunch
