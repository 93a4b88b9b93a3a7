// The unit tests' main: before any test runs, every XDG directory points into a fresh temporary directory (removed
// at exit), so no test can read or write the user's own job index, site profiles or state (t0236 checks it).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <stdlib.h>

#include <filesystem>
#include <string>

int main(int argc, char** argv) {
  char base[] = "/tmp/hpclaunch-unit-XXXXXX";
  if (!::mkdtemp(base)) return 1;
  for (const char* var : {"XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"})
    ::setenv(var, (std::string(base) + "/" + var).c_str(), 1);
  doctest::Context context(argc, argv);
  int rc = context.run();
  std::error_code ec;
  std::filesystem::remove_all(base, ec);
  return rc;
}
