// Cuts a stream (a worker's output, a growing log file) into whole lines, so that a prefixed line is never two
// ranks mixed. A line longer than the limit is passed on in pieces of the limit; a last line without newline at
// the end of input.
#pragma once
#include <functional>
#include <string>
#include <string_view>

namespace hpclaunch {

class LineSplitter {
 public:
  using Emit = std::function<void(std::string_view line)>;  // without the newline
  explicit LineSplitter(size_t max_line = 64 * 1024) : m_max_line(max_line) {}
  void feed(std::string_view data, const Emit& emit);
  void finish(const Emit& emit);

 private:
  size_t m_max_line;
  std::string m_partial;
};

}  // namespace hpclaunch
