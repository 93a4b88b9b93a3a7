// Picking one rank's lines out of a job's output. Pure: no files, no clock. (Cutting a growing file into lines:
// util/line_splitter.h.)
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hpclaunch {

// The rank a line belongs to: the agent's "[host:3] ..." prefix, or srun -l's "3: ..." (leading spaces allowed).
// nullopt for a line with neither (the batch script's own output).
std::optional<int> line_rank(std::string_view line);

// Whether `logs --rank` keeps the line: every line without a rank filter, else only that rank's.
bool keep_line(std::string_view line, std::optional<int> rank);

}  // namespace hpclaunch
