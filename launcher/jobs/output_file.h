// Which of a job's output files is there: its backend names the candidates (slurm-ID.out, PBS's, output.log).
#pragma once
#include <string>

#include "record/job_record.h"

namespace hpclaunch {

// The first of the backend's output files for `job` that exists; "" when none does yet.
std::string existing_output(const JobRecord& job);

}  // namespace hpclaunch
