// Cuts a stream (a worker's output, a growing log file) into whole lines, so that a prefixed line is never two
// ranks mixed. A line longer than the limit is passed on in pieces of the limit; a last line without newline at
// the end of input.
#pragma once
#include <deque>
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

// The last `lines` lines of a stream, each cut to `width` bytes ("..." marks a cut): a failed worker's last words.
class LineTail {
 public:
  explicit LineTail(size_t lines = 10, size_t width = 300) : m_lines(lines), m_width(width) {}
  void add(std::string_view line);
  std::string text() const;  // the lines, each ending in a newline; "" if none
  void clear() { m_tail.clear(); }

 private:
  size_t m_lines, m_width;
  std::deque<std::string> m_tail;
};

}  // namespace hpclaunch
