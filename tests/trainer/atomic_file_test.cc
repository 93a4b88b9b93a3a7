// Atomic replacement: readers see old or new contents; a process dying mid-save leaves the old file intact.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "atomic_file.h"

using namespace hpctrain;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct TempDir {
  std::string path = "/tmp/hpctrain-atomic-" + std::to_string(::getpid());
  TempDir() { std::filesystem::create_directories(path); }
  ~TempDir() { std::filesystem::remove_all(path); }
};

}  // namespace

TEST_SUITE_BEGIN("AtomicFile");

TEST_CASE("writing replaces the contents and leaves no temporary behind") {
  TempDir dir;
  const std::string target = dir.path + "/latest.pt";
  write_file_atomically(target, {'a', 'b'}, k_checkpoint_file);
  CHECK(slurp(target) == "ab");
  write_file_atomically(target, {'c'}, k_checkpoint_file);
  CHECK(slurp(target) == "c");
  CHECK_FALSE(std::filesystem::exists(temporary_path_for(target)));
  CHECK(remove_stale_temporaries(target) == 0);
}

TEST_CASE("a process killed in the middle of a save leaves the previous file whole") {
  TempDir dir;
  const std::string target = dir.path + "/latest.pt";
  write_file_atomically(target, std::vector<char>(1000, 'o'), k_checkpoint_file);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::setenv("HPCLAUNCH_TRAIN_FAULT", "partial-save", 1);
    write_file_atomically(target, std::vector<char>(5000, 'n'), k_checkpoint_file);
    ::_exit(0);  // not reached: the fault hook exits first
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == k_exit_fault_injected);
  CHECK(slurp(target) == std::string(1000, 'o'));
  CHECK(remove_stale_temporaries(target) == 1);  // the half-written temporary is swept on the next start
}

TEST_CASE("a folder that cannot be written to is a one-line failure naming the file, its role and the fix") {
  const std::string tmp = ".latest.pt.tmp." + std::to_string(::getpid());
  CHECK_THROWS_WITH(write_file_atomically("/nonexistent-dir/latest.pt", {'x'}, k_checkpoint_file),
                    ("/nonexistent-dir/latest.pt: cannot write the checkpoint (creating its temporary file " + tmp +
                     ": No such file or directory); check the checkpoint folder's space and rights")
                        .c_str());
  CHECK_THROWS_WITH(write_file_atomically("/nonexistent-dir/report.json", {'x'}, {"the report", "check the job directory"}),
                    doctest::Contains("/nonexistent-dir/report.json: cannot write the report (creating its temporary "
                                      "file .report.json.tmp."));
}

TEST_SUITE_END();
