// Fuzz target: wall-clock limits in sbatch's forms (util/time_limit.cc), from --time, profiles and scontrol.
// A limit that parses is positive and reads back the same from what #SBATCH --time and PBS walltime= get.
#include "fuzz_check.h"
#include "util/time_limit.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto seconds = hpclaunch::parse_time_limit(fuzz_text(data, size));
  if (!seconds) return 0;
  FUZZ_CHECK(*seconds > 0);
  FUZZ_CHECK(hpclaunch::parse_time_limit(hpclaunch::format_slurm_time(*seconds)) == seconds);
  FUZZ_CHECK(hpclaunch::parse_time_limit(hpclaunch::format_pbs_time(*seconds)) == seconds);
  return 0;
}
