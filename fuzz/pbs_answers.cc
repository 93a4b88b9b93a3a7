// Fuzz target: what PBS's commands answer, as dialect/pbs.cc reads it: `qstat -f` / `qstat -x -f` (one job, or many and an array's subjobs
// with -t, one query a refresh) and qsub's
// job id. Reading may only throw hpclaunch::Error (qsub's answer holds no job id).
#include "fuzz_check.h"
#include "schedulers/pbs/dialect.h"
#include "util/error.h"

using namespace hpclaunch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(fuzz_text(data, size));
  if (auto s = parse_qstat_full(text)) FUZZ_CHECK(!s->raw.empty() && !describe(*s).empty());
  for (const auto& [id, state] : parse_qstat_jobs(text)) FUZZ_CHECK(!describe(state).empty());
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
