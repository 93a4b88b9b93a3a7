// Fuzz target: a job's output as `logs --rank` filters it (jobs/log_filter.cc): each line of the job's output
// (anything its programs printed) is given to line_rank and keep_line. A rank read from a line is never negative,
// and without a rank filter every line is kept.
#include "fuzz_check.h"
#include "jobs/log_filter.h"

using namespace hpclaunch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = fuzz_text(data, size);
  while (true) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    const std::optional<int> rank = line_rank(line);
    FUZZ_CHECK(!rank || *rank >= 0);
    FUZZ_CHECK(keep_line(line, std::nullopt));
    if (rank) FUZZ_CHECK(keep_line(line, rank) && !keep_line(line, *rank + 1));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return 0;
}
