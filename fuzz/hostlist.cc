// Fuzz target: Slurm hostlists and tasks-per-node lists (dialect/hostlist.cc), as SLURM_JOB_NODELIST and
// SLURM_TASKS_PER_NODE give them. Bad input may only throw hpclaunch::Error.
#include "fuzz_check.h"
#include "dialect/hostlist.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = fuzz_text(data, size);
  try {
    for (const auto& host : hpclaunch::expand_hostlist(text)) FUZZ_CHECK(!host.empty());
  } catch (const hpclaunch::Error&) {
  }
  try {
    for (int n : hpclaunch::expand_tasks_per_node(text)) FUZZ_CHECK(n >= 1);
  } catch (const hpclaunch::Error&) {
  }
  return 0;
}
