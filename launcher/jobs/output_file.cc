#include "jobs/output_file.h"

#include <filesystem>

#include "scheduler/backend.h"

namespace hpclaunch {

std::string existing_output(const JobRecord& job) {
  std::error_code ec;
  for (const auto& c : backend_for(job.scheduler).output_files(job))
    if (std::filesystem::exists(c, ec)) return c;
  return {};
}

}  // namespace hpclaunch
