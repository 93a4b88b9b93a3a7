// Fuzz target: what a live scheduler says about its cluster (dialect/slurm.cc, dialect/pbs.cc): `scontrol show partition
// -o`, `scontrol show node -o`, `sacctmgr show assoc`, `pbsnodes -av`, `qstat -Qf`. Reading may only throw
// hpclaunch::Error (a partition's Nodes= that is no hostlist).
#include "fuzz_check.h"
#include "schedulers/pbs/dialect.h"
#include "schedulers/slurm/dialect.h"
#include "util/error.h"

using namespace hpclaunch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = fuzz_text(data, size);
  try {
    for (const auto& p : parse_scontrol_partitions(text)) FUZZ_CHECK(p.max_time_s >= 0);
  } catch (const Error&) {
  }
  for (const auto& n : parse_scontrol_nodes(text)) n.gpus();
  std::vector<std::string> accounts, qos;
  parse_sacctmgr_assoc(text, &accounts, &qos);
  for (const auto& n : parse_pbsnodes(text)) n.gpus();
  for (const auto& p : parse_qstat_queues(text)) FUZZ_CHECK(p.max_time_s >= 0);
  return 0;
}
