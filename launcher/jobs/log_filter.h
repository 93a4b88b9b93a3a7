// Picking one rank's lines out of a job's output, and cutting a growing file into whole lines for `logs --follow`.
// Pure: no files, no clock.
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

// Collects bytes as they arrive and hands back whole lines (without the newline); a partial last line waits for
// the rest, or for flush() at the end.
class LineBuffer {
 public:
  std::vector<std::string> add(std::string_view bytes);
  std::optional<std::string> flush();

 private:
  std::string m_pending;
};

}  // namespace hpclaunch
