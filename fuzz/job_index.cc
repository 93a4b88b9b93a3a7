// Fuzz target: the job index (submit/job_index.cc) as `jobs`, `logs JOB` and `jobs --prune` read it: one JSON
// object a line, or an old bare directory line, with perhaps a torn last line from a writer that was killed.
// Reading never throws; what is kept is from complete lines only, and no entry is empty.
#include "fuzz_check.h"
#include "submit/job_index.h"

using namespace hpclaunch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz_text(data, size);
  const size_t complete = complete_lines_size(text);
  FUZZ_CHECK(complete <= text.size() && (complete == 0 || text[complete - 1] == '\n'));
  const std::vector<std::string> dirs = parse_job_index(text);
  for (const auto& d : dirs) FUZZ_CHECK(!d.empty());
  // An entry written back reads back the same (a job directory: an absolute path, one line).
  for (const auto& d : dirs) {
    if (d.front() != '/' || d.find('\n') != std::string::npos) continue;
    const std::vector<std::string> again = parse_job_index(index_line({d}));
    FUZZ_CHECK(again.size() == 1 && again[0] == d);
  }
  return 0;
}
