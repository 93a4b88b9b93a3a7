// The job index and job directories under concurrent submits: complete lines only, a torn tail cut before the next
// entry, pruning, directories reserved by one submit alone, and their mode. In a temporary XDG_STATE_HOME.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "submit/job_dir.h"
#include "submit/job_index.h"
#include "util/error.h"
#include "util/file.h"

namespace job_index_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;
namespace fs = std::filesystem;

namespace {

struct TempIndex {
  fs::path base = fs::temp_directory_path() / ("hpclaunch-job-index-test-" + std::to_string(::getpid()));
  std::string old_state;
  fs::path old_cwd = fs::current_path();
  TempIndex() {
    fs::remove_all(base);
    fs::create_directories(base);
    if (const char* s = std::getenv("XDG_STATE_HOME")) old_state = s;
    ::setenv("XDG_STATE_HOME", (base / "state").c_str(), 1);
  }
  ~TempIndex() {
    fs::current_path(old_cwd);
    if (old_state.empty()) ::unsetenv("XDG_STATE_HOME");
    else ::setenv("XDG_STATE_HOME", old_state.c_str(), 1);
    fs::remove_all(base);
  }
};

mode_t mode_of(const fs::path& p) {
  struct stat st {};
  ::stat(p.c_str(), &st);
  return st.st_mode & 07777;
}

}  // namespace

TEST_SUITE_BEGIN("job index");

TEST_CASE("the index is read as complete lines: an unterminated last line is a write still under way") {
  CHECK(parse_job_index("") == std::vector<std::string>{});
  CHECK(parse_job_index("/a\n\n/b\n") == std::vector<std::string>{"/a", "/b"});
  CHECK(parse_job_index("/a\n/b/half-writ") == std::vector<std::string>{"/a"});
  CHECK(parse_job_index("/half") == std::vector<std::string>{});
  CHECK(complete_lines_size("/a\n/b") == 3);
  CHECK(complete_lines_size("/b") == 0);
}

TEST_CASE("an entry after a writer killed mid-line is its own line; the torn tail is cut") {
  TempIndex t;
  std::string err;
  REQUIRE(add_to_job_index("/jobs/one", &err));
  { std::ofstream(job_index_path(), std::ios::app) << "/jobs/tw"; }  // what a kill -9 mid-write leaves
  CHECK(read_job_index() == std::vector<std::string>{"/jobs/one"});
  REQUIRE(add_to_job_index("/jobs/two", &err));
  CHECK(read_job_index() == std::vector<std::string>{"/jobs/one", "/jobs/two"});
  CHECK(*read_file(job_index_path()) == "{\"dir\":\"/jobs/one\"}\n{\"dir\":\"/jobs/two\"}\n");
}

TEST_CASE("an entry is a JSON object; an index from before that (plain directories) still reads; damage is skipped") {
  CHECK(index_line({"/a b/\"q\""}) == "{\"dir\":\"/a b/\\\"q\\\"\"}\n");
  CHECK(parse_job_index(index_line({"/a b/\"q\""})) == std::vector<std::string>{"/a b/\"q\""});
  CHECK(parse_job_index("/old/one\n{\"dir\":\"/new/two\"}\n") == std::vector<std::string>{"/old/one", "/new/two"});
  CHECK(parse_job_index("{\"dir\":\n{\"dir\":5}\n{}\n{\"dir\":\"\"}\n{\"dir\":\"/ok\"}\n") == std::vector<std::string>{"/ok"});
}

TEST_CASE("a job directory whose name is not UTF-8 is written bare, as old indexes had it, and reads back") {
  // JSON holds only UTF-8: nlohmann's dump threw here, after the job was submitted (found by fuzz/job_index.cc).
  const std::string latin1 = "/home/u/jobs/r\xe9sum\xe9";
  CHECK(index_line({latin1}) == latin1 + "\n");
  CHECK(parse_job_index(index_line({latin1}) + index_line({"/b"})) == std::vector<std::string>{latin1, "/b"});
}

TEST_CASE("many processes adding at once: every entry is there once, whole") {
  TempIndex t;
  constexpr int k_procs = 16, k_each = 25;
  std::vector<pid_t> kids;
  for (int p = 0; p < k_procs; ++p) {
    pid_t pid = ::fork();
    if (pid == 0) {
      std::string err;
      for (int i = 0; i < k_each; ++i)
        if (!add_to_job_index("/jobs/p" + std::to_string(p) + "-" + std::to_string(i), &err)) ::_exit(1);
      ::_exit(0);
    }
    kids.push_back(pid);
  }
  for (pid_t pid : kids) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  auto entries = read_job_index();
  CHECK(entries.size() == k_procs * k_each);
  CHECK(std::set<std::string>(entries.begin(), entries.end()).size() == k_procs * k_each);
}

TEST_CASE("prune keeps the order of what it keeps and returns what it dropped") {
  TempIndex t;
  std::string err;
  for (const char* d : {"/a", "/gone1", "/b", "/gone2"}) REQUIRE(add_to_job_index(d, &err));
  auto dropped = prune_job_index([](const std::string& d) { return d.find("gone") == std::string::npos; });
  CHECK(dropped == std::vector<std::string>{"/gone1", "/gone2"});
  CHECK(read_job_index() == std::vector<std::string>{"/a", "/b"});
  CHECK(prune_job_index([](const std::string&) { return true; }).empty());
  REQUIRE(add_to_job_index("/c", &err));
  CHECK(read_job_index() == std::vector<std::string>{"/a", "/b", "/c"});
}

TEST_CASE("two submits of the same name in the same second reserve two directories") {
  TempIndex t;
  fs::current_path(t.base);
  std::string a = reserve_job_dir("", "train", "20260101-120000");
  std::string b = reserve_job_dir("", "train", "20260101-120000");
  CHECK(a == (t.base / "hpclaunch-jobs" / "train-20260101-120000").string());
  CHECK(b == (t.base / "hpclaunch-jobs" / "train-20260101-120000-2").string());
  CHECK(fs::is_directory(a));
  CHECK(fs::is_directory(b));
  // The chooser alone (dry runs) now moves past both.
  CHECK(choose_job_dir("", "train", "20260101-120000") == (t.base / "hpclaunch-jobs" / "train-20260101-120000-3").string());
  // Filling a reserved directory replaces it; one already filled is never replaced.
  write_job_dir(a, "#!/bin/bash\n", nlohmann::json::object());
  CHECK(fs::exists(fs::path(a) / "job.sh"));
  CHECK_THROWS_WITH(write_job_dir(a, "#!/bin/bash\n", nlohmann::json::object()), doctest::Contains("cannot create the job directory"));
  CHECK(fs::exists(fs::path(a) / "plan.json"));
}

TEST_CASE("a job directory is its owner's alone unless --job-dir-mode says otherwise") {
  TempIndex t;
  write_job_dir((t.base / "private").string(), "#!/bin/bash\n", nlohmann::json::object());
  CHECK(mode_of(t.base / "private") == 0700);
  mode_t old = ::umask(077);  // the mode asked for is the mode given, whatever the umask
  write_job_dir((t.base / "shared").string(), "#!/bin/bash\n", nlohmann::json::object(), {}, parse_job_dir_mode("755"));
  ::umask(old);
  CHECK(mode_of(t.base / "shared") == 0755);
  CHECK(parse_job_dir_mode("0750") == 0750);
  CHECK_THROWS_WITH(parse_job_dir_mode("rwx"), "--job-dir-mode: 'rwx' is not an octal mode; give one such as 700, 750 or 755");
  CHECK_THROWS_WITH(parse_job_dir_mode("1777"), doctest::Contains("is not an octal mode"));
  CHECK_THROWS_WITH(parse_job_dir_mode("644"),
                    "--job-dir-mode: 644 does not let you read, write and enter your own job directory; start it with 7, "
                    "e.g. 700, 750 or 755");
}

TEST_SUITE_END();

}  // namespace job_index_test
