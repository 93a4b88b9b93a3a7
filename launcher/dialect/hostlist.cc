// Slurm hostlist expansion. Mirrors `scontrol show hostnames` of Slurm 22.05, quirks included, because the
// lists come from Slurm: several bracket groups expand with the last group fastest and the others as an
// odometer whose first group turns fastest (a[1-2]b[1-2]c[1-2] -> a1b1c1 a1b1c2 a2b1c1 ...), and text after
// the last bracket group is refused. Where scontrol guesses on broken input (n[1-2 , n[1-]) we refuse too.
#include "dialect/hostlist.h"

#include <fmt/core.h>

#include <algorithm>

#include "util/error.h"
#include "util/strings.h"

namespace hpclaunch {

namespace {

constexpr long long k_max_range = 64 * 1024;  // Slurm's MAX_RANGE: "Too many hosts in range"
constexpr size_t k_max_hosts = 1000 * 1000;
constexpr size_t k_max_name = 255;                 // a host name's longest (a DNS name's 253, HOST_NAME_MAX 64)
constexpr size_t k_max_chars = 16 * 1024 * 1024;   // all names together: 100,000 hosts of 160 characters
constexpr const char* k_hostlist_fix = "write it as Slurm does, e.g. nid[001000-001003,001010] or a[1-2],b3";

bool is_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

class HostlistParser {
 public:
  HostlistParser(std::string_view list, std::string_view where) : m_list(list), m_where(where) {}

  std::vector<std::string> expand() {
    std::vector<std::string> hosts;
    for (std::string_view token : top_level_tokens()) expand_token(token, &hosts);
    return hosts;
  }

 private:
  void add(std::string host, std::vector<std::string>* hosts) const {
    if (hosts->size() >= k_max_hosts) malformed(fmt::format("more than {} hosts", k_max_hosts));
    m_chars += host.size();
    if (m_chars > k_max_chars) malformed(fmt::format("more than {} MiB of host names", k_max_chars >> 20));
    hosts->push_back(std::move(host));
  }

  [[noreturn]] void malformed(const std::string& what) const {
    throw Error(std::string(m_where), fmt::format("malformed hostlist '{}': {}", m_list, what), k_hostlist_fix);
  }

  // Names are separated by commas and white space outside brackets; empty names are skipped (as Slurm does).
  std::vector<std::string_view> top_level_tokens() const {
    std::vector<std::string_view> tokens;
    int depth = 0;
    size_t start = 0;
    for (size_t i = 0; i <= m_list.size(); ++i) {
      char c = i < m_list.size() ? m_list[i] : ',';
      if (c == '[') {
        if (++depth > 1) malformed(fmt::format("nested '[' at offset {}", i));
      } else if (c == ']') {
        if (--depth < 0) malformed(fmt::format("']' without '[' at offset {}", i));
      } else if (depth == 0 && (c == ',' || c == ' ' || c == '\t' || c == '\n')) {
        if (i > start) tokens.push_back(m_list.substr(start, i - start));
        start = i + 1;
      }
    }
    if (depth != 0) malformed("'[' without ']'");
    return tokens;
  }

  // "1-3,05" -> {"1","2","3","05"}: each bound's width is the low bound's (zero padding kept).
  std::vector<std::string> expand_ranges(std::string_view ranges) const {
    std::vector<std::string> values;
    for (const std::string& r : split(ranges, ',')) {
      size_t dash = r.find('-');
      std::string_view lo_s = std::string_view(r).substr(0, dash);
      std::string_view hi_s = dash == std::string::npos ? lo_s : std::string_view(r).substr(dash + 1);
      if (!is_digits(lo_s) || !is_digits(hi_s))
        malformed(fmt::format("range '{}' is not N or N-M with decimal numbers", r));
      if (lo_s.size() > 18 || hi_s.size() > 18) malformed(fmt::format("range '{}' has too many digits", r));
      long long lo = std::stoll(std::string(lo_s)), hi = std::stoll(std::string(hi_s));
      if (hi < lo) malformed(fmt::format("range '{}' goes down", r));
      if (hi - lo + 1 > k_max_range)
        malformed(fmt::format("range '{}' has more than {} hosts", r, k_max_range));
      for (long long v = lo; v <= hi; ++v) values.push_back(fmt::format("{:0{}}", v, lo_s.size()));
    }
    return values;
  }

  void expand_token(std::string_view token, std::vector<std::string>* hosts) const {
    // token = text0 [g0] text1 [g1] ... text(k-1) [g(k-1)], nothing after the last group.
    std::vector<std::string> texts;
    std::vector<std::vector<std::string>> groups;
    size_t pos = 0;
    while (true) {
      size_t open = token.find('[', pos);
      if (open == std::string_view::npos) break;
      size_t close = token.find(']', open);  // balanced and unnested: checked by top_level_tokens
      texts.emplace_back(token.substr(pos, open - pos));
      groups.push_back(expand_ranges(token.substr(open + 1, close - open - 1)));
      pos = close + 1;
    }
    // The longest name the token makes, before making any: a name past a host name's length is no host, and the
    // expansion's whole size is bounded (a fuzzed list of long names ran the fuzzer out of 2 GB).
    size_t longest = 0;
    for (const auto& t : texts) longest += t.size();
    for (size_t g = 0; g < groups.size(); ++g) {
      size_t widest = 0;
      for (const auto& v : groups[g]) widest = std::max(widest, v.size());
      longest += widest;
    }
    if (groups.empty()) longest = token.size();
    if (longest > k_max_name)
      malformed(fmt::format("a host name of {} characters (a host name has at most {})", longest, k_max_name));
    if (groups.empty()) {
      add(std::string(token), hosts);
      return;
    }
    if (pos != token.size())
      malformed(fmt::format("text '{}' after the last ']' in '{}' (Slurm refuses it)", token.substr(pos), token));
    std::vector<size_t> at(groups.size(), 0);
    const size_t last = groups.size() - 1;
    while (true) {
      std::string head;
      for (size_t g = 0; g < last; ++g) head += texts[g] + groups[g][at[g]];
      head += texts[last];
      for (const std::string& v : groups[last]) add(head + v, hosts);
      size_t g = 0;  // odometer over the groups before the last, first group fastest
      while (g < last && ++at[g] == groups[g].size()) at[g++] = 0;
      if (g == last) break;
    }
  }

  std::string_view m_list;
  std::string_view m_where;
  mutable size_t m_chars = 0;  // of the names made so far
};

}  // namespace

std::vector<std::string> expand_hostlist(std::string_view list, std::string_view where) {
  return HostlistParser(list, where).expand();
}

std::vector<int> expand_tasks_per_node(std::string_view spec, std::string_view where) {
  auto bad = [&](const std::string& what) -> Error {
    return Error(std::string(where), fmt::format("malformed tasks-per-node list '{}': {}", spec, what),
                 "expected Slurm's form, e.g. 4(x2),3");
  };
  std::vector<int> counts;
  if (trim(spec).empty()) throw bad("it is empty");
  for (const std::string& item : split(spec, ',')) {
    std::string_view count_s = item, repeat_s = "1";
    size_t paren = item.find('(');
    if (paren != std::string::npos) {
      if (item.size() < paren + 4 || item.compare(paren, 2, "(x") != 0 || item.back() != ')')
        throw bad(fmt::format("'{}' is not N or N(xM)", item));
      count_s = std::string_view(item).substr(0, paren);
      repeat_s = std::string_view(item).substr(paren + 2, item.size() - paren - 3);
    }
    long long count = 0, repeat = 0;
    if (!is_digits(count_s) || !parse_int(count_s, &count) || count < 1 || count > 1000000)
      throw bad(fmt::format("'{}' is not a positive task count", item));
    if (!is_digits(repeat_s) || !parse_int(repeat_s, &repeat) || repeat < 1 || repeat > 1000000)
      throw bad(fmt::format("'{}' has a bad repeat count", item));
    counts.insert(counts.end(), static_cast<size_t>(repeat), static_cast<int>(count));
  }
  return counts;
}

}  // namespace hpclaunch
