// Fuzz target: the files of a job directory as `jobs`, `logs`, `wait`, `cancel` and `exclude` read them back
// (record/job_record.cc, scheduler/local.cc): plan.json, job.json, state.json, tasks/I/task.json,
// excluded-nodes.json, and the preflight report `exclude --from-preflight` takes. Any of them may have been changed
// by hand or cut short by a full disk. The first byte picks the file, the rest is its contents, written into a
// job directory under $TMPDIR; reading may only throw hpclaunch::Error, and what reads is a record of that directory.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "fuzz_check.h"
#include "record/job_record.h"
#include "schedulers/local/backend.h"
#include "util/error.h"

using namespace hpclaunch;
namespace fs = std::filesystem;

namespace {

// The job directory, made on first use and removed when the fuzzer exits.
struct JobDir {
  fs::path path = fs::temp_directory_path() / ("hpclaunch-fuzz-job-files." + std::to_string(::getpid()));
  JobDir() { fs::create_directories(path / "tasks" / "0"); }
  ~JobDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

const fs::path& job_dir() {
  static const JobDir dir;
  return dir.path;
}

void put(const fs::path& path, std::string_view text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(text.data(), static_cast<std::streamsize>(text.size()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const char* const k_files[] = {"plan.json", "job.json", "state.json", "tasks/0/task.json",
                                        "excluded-nodes.json"};
  const fs::path& dir = job_dir();
  for (const char* f : k_files) fs::remove(dir / f);
  const std::string_view text = fuzz_text(data + 1, size - 1);
  const int which = data[0] % 6;
  if (which < 5) put(dir / k_files[which], text);
  try {
    JobRecord r = read_job_record(dir.string());
    FUZZ_CHECK(r.dir_exists && r.dir == dir.string());
    if (r.is_array()) (void)task_label(task_record(r, 0));
  } catch (const Error& e) {
    FUZZ_CHECK(!e.where().empty());
  }
  try {
    for (const auto& n : read_excluded_nodes(dir.string()).nodes) (void)n.node.size();
  } catch (const Error&) {
  }
  for (bool alive : {false, true}) {
    try {
      (void)describe(parse_local_state(text, alive, "state.json"));
    } catch (const Error&) {
    }
  }
  try {
    const auto found = bad_nodes_of_preflight(std::string(text), "preflight.json", 1);
    FUZZ_CHECK(merge_excluded({}, found).size() <= found.size());
  } catch (const Error&) {
  }
  return 0;
}
