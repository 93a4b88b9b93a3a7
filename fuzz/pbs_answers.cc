// Fuzz target: what PBS's commands answer, as scheduler/pbs.cc reads it: `qstat -f` / `qstat -x -f` and qsub's
// job id. Reading may only throw hpclaunch::Error (qsub's answer holds no job id).
#include "fuzz_check.h"
#include "scheduler/pbs.h"
#include "util/error.h"

using namespace hpclaunch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(fuzz_text(data, size));
  if (auto s = parse_qstat_full(text)) FUZZ_CHECK(!s->raw.empty() && !describe(*s).empty());
  for (int exit_code : {0, 1}) {
    ProcessResult answer{exit_code, text, text};
    try {
      FUZZ_CHECK(!parse_qsub_answer(answer).empty());
    } catch (const Error&) {
    }
    pbs_unknown_job(answer);
  }
  return 0;
}
