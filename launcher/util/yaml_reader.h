// Reading YAML documents with the file name at hand, so that every complaint is one hpclaunch::Error naming
// file:line:column, the field, what is wrong and the fix. Used for site profiles and job specs.
#pragma once
#include <fmt/core.h>
#include <yaml-cpp/yaml.h>

#include <string>
#include <utility>
#include <vector>

#include "util/time_limit.h"
#include "util/error.h"
#include "util/shell.h"
#include "util/strings.h"

namespace hpclaunch {

// Walks one YAML document with the file name at hand, so that every complaint carries file:line:column.
class Reader {
 public:
  explicit Reader(std::string file) : m_file(std::move(file)) {}

  [[noreturn]] void fail(const YAML::Node& at, const std::string& field, const std::string& what,
                         const std::string& fix) const {
    throw Error(where(at.Mark()), field.empty() ? what : field + ": " + what, fix);
  }

  std::string where(const YAML::Mark& m) const {
    if (m.is_null()) return m_file;
    return fmt::format("{}:{}:{}", m_file, m.line + 1, m.column + 1);
  }

  void expect_map(const YAML::Node& n, const std::string& field) const {
    if (!n.IsMap()) fail(n, field, "expected a mapping of keys to values", "see docs/site-profiles.md");
  }

  // Rejects keys outside `allowed`, pointing at the key itself.
  void check_keys(const YAML::Node& map, const std::string& prefix, const std::vector<std::string>& allowed) const {
    expect_map(map, prefix);
    for (auto it = map.begin(); it != map.end(); ++it) {
      std::string key = it->first.Scalar();
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        std::string field = prefix.empty() ? key : prefix + "." + key;
        throw Error(where(it->first.Mark()), "unknown key '" + field + "'" + did_you_mean(key, allowed),
                    "remove it or use one of: " + join(allowed, ", "));
      }
    }
  }

  std::string scalar(const YAML::Node& n, const std::string& field) const {
    if (!n.IsScalar()) fail(n, field, "expected a single value", "write it as `" + leaf(field) + ": VALUE`");
    // A carriage return can only be inside quotes (elsewhere it ends the line); yaml-cpp would write it back
    // unquoted, where it is read as a line end, so `sites show` would not read back the same.
    if (n.Scalar().find('\r') != std::string::npos)
      fail(n, field, "holds a carriage return inside quotes", "remove it (save the file with Unix line ends)");
    return n.Scalar();
  }

  int integer(const YAML::Node& n, const std::string& field, long long min, long long max = 1'000'000'000) const {
    std::string s = scalar(n, field);
    long long v = 0;
    if (!parse_int(s, &v)) fail(n, field, "expected a whole number, got '" + s + "'", "write e.g. `" + leaf(field) + ": 4`");
    if (v < min || v > max) fail(n, field, fmt::format("{} is out of range {}..{}", v, min, max), "fix the value");
    return static_cast<int>(v);
  }

  bool boolean(const YAML::Node& n, const std::string& field) const {
    std::string s = scalar(n, field);
    if (s == "true" || s == "yes") return true;
    if (s == "false" || s == "no") return false;
    fail(n, field, "expected true or false, got '" + s + "'", "write `" + leaf(field) + ": true` or `false`");
  }

  std::vector<std::string> strings(const YAML::Node& n, const std::string& field) const {
    if (!n.IsSequence()) fail(n, field, "expected a list", "write it as `" + leaf(field) + ": [a, b]`");
    std::vector<std::string> out;
    for (const auto& item : n) out.push_back(scalar(item, field + "[]"));
    return out;
  }

  // A mapping of environment variable names to values, in file order; names are checked.
  std::vector<std::pair<std::string, std::string>> env_map(const YAML::Node& n, const std::string& field) const {
    expect_map(n, field);
    std::vector<std::pair<std::string, std::string>> out;
    for (auto it = n.begin(); it != n.end(); ++it) {
      std::string key = it->first.Scalar();
      if (!is_env_name(key))
        throw Error(where(it->first.Mark()), field + ": '" + key + "' is not a variable name",
                    "use letters, digits and _ only, not starting with a digit");
      out.emplace_back(key, scalar(it->second, field + "." + key));
    }
    return out;
  }

  long time(const YAML::Node& n, const std::string& field) const {
    std::string s = scalar(n, field);
    auto t = parse_time_limit(s);
    if (!t) fail(n, field, "'" + s + "' is not a time limit", "use MM, HH:MM:SS, D-HH or D-HH:MM:SS");
    return *t;
  }

  // Parses `text` as one YAML mapping; syntax errors keep their position. `what` names the document ("a job
  // spec") and `fix` says how a mapping starts, for a document that is not one.
  YAML::Node load_map(const std::string& text, const std::string& what, const std::string& fix) const {
    YAML::Node root;
    try {
      root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
      throw Error(where(e.mark), "not valid YAML: " + e.msg, "fix the syntax at that position");
    }
    if (!root.IsMap()) fail(root, "", what + " must be a mapping", fix);
    return root;
  }

  template <typename E>
  E choice(const YAML::Node& n, const std::string& field, const std::vector<std::pair<std::string, E>>& options) const {
    std::string s = scalar(n, field);
    std::vector<std::string> names;
    for (const auto& [name, value] : options) {
      if (name == s) return value;
      names.push_back(name);
    }
    fail(n, field, "'" + s + "' is not allowed" + did_you_mean(s, names), "use one of: " + join(names, ", "));
  }

 private:
  static std::string leaf(const std::string& field) {
    size_t dot = field.rfind('.');
    return dot == std::string::npos ? field : field.substr(dot + 1);
  }
  std::string m_file;
};

}  // namespace hpclaunch
