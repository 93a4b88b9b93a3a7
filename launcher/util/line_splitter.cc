#include "util/line_splitter.h"

namespace hpclaunch {

void LineSplitter::feed(std::string_view data, const Emit& emit) {
  while (!data.empty()) {
    size_t nl = data.find('\n');
    if (nl == std::string_view::npos) {
      m_partial.append(data);
      while (m_partial.size() >= m_max_line) {
        emit(std::string_view(m_partial).substr(0, m_max_line));
        m_partial.erase(0, m_max_line);
      }
      return;
    }
    if (m_partial.empty()) {
      emit(data.substr(0, nl));
    } else {
      m_partial.append(data.substr(0, nl));
      emit(m_partial);
      m_partial.clear();
    }
    data.remove_prefix(nl + 1);
  }
}

void LineSplitter::finish(const Emit& emit) {
  if (!m_partial.empty()) emit(m_partial);
  m_partial.clear();
}

void LineTail::add(std::string_view line) {
  if (m_lines == 0) return;
  if (m_tail.size() == m_lines) m_tail.pop_front();
  m_tail.emplace_back(line.size() > m_width ? std::string(line.substr(0, m_width)) + "..." : std::string(line));
}

std::string LineTail::text() const {
  std::string out;
  for (const auto& l : m_tail) out += l + "\n";
  return out;
}

}  // namespace hpclaunch
