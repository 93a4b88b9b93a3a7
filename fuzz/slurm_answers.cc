// Fuzz target: what Slurm's commands answer, as dialect/slurm.cc reads it: `squeue -O ...` and `sacct` (every
// state query: one job, an array's tasks, every job in view), `sbatch --parsable` and `sbatch --test-only`. A scheduler's answer
// may be anything; reading it may only throw hpclaunch::Error (sbatch's answer holds no job id), and a state that
// reads describes itself.
#include "fuzz_check.h"
#include "schedulers/slurm/dialect.h"
#include "util/error.h"

using namespace hpclaunch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(fuzz_text(data, size));
  slurm_phase(text);
  for (const auto& [id, state] : parse_squeue_jobs(text)) FUZZ_CHECK(!id.empty() && !describe(state).empty());
  for (const auto& [id, state] : parse_sacct_jobs(text)) FUZZ_CHECK(!id.empty() && !describe(state).empty());
  for (int exit_code : {0, 1}) {
    ProcessResult answer{exit_code, text, text};
    try {
      FUZZ_CHECK(!parse_sbatch_answer(answer).empty());
    } catch (const Error&) {
    }
    parse_sbatch_test_only(answer);
    slurm_unknown_job(answer);
  }
  return 0;
}
