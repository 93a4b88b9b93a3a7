// Job specs: the options of `hpclaunch submit` as a YAML file (`--spec FILE`), so a ready job (examples/) is
// data. Keys are the flags without dashes (gpus_per_node for --gpus-per-node) plus `command:` and an optional
// `description:`; flags given on the command line replace the spec's values.
#pragma once
#include <string>

#include "plan/plan.h"

namespace hpclaunch {

// Fills `request` from the spec; throws Error naming file:line:column and the key.
void read_job_spec(const std::string& file, const std::string& text, JobRequest* request);

}  // namespace hpclaunch
