// Which paths a .gitignore (or an exclude list in its syntax) leaves out: `*`, `?`, `[a-z]`, `**`, a leading `/`
// or an inner `/` anchors a pattern to its file's folder, a trailing `/` matches folders only, `!` takes a path
// back, and the last matching pattern wins. Pure: the caller reads the files and walks the tree.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace hpclaunch {

// Whether `pattern` (gitignore glob: `*` and `?` never match '/', `[...]` a class, `**` any folders) matches the
// whole of `path` ('/'-separated, relative).
bool glob_match(std::string_view pattern, std::string_view path);

class IgnoreRules {
 public:
  // Adds the lines of a .gitignore found in folder `base` ("" for the root; relative, no trailing '/').
  void add_file(const std::string& base, std::string_view text);
  // Adds one pattern (a --snapshot-exclude), relative to the root.
  void add_pattern(const std::string& pattern) { add_line("", pattern); }
  // Whether `path` (relative to the root; `is_dir` for a folder) is left out by its own patterns. A path inside a
  // left-out folder is not asked about: a walker does not enter one (see ignored_with_parents).
  bool ignored(std::string_view path, bool is_dir) const;
  // Whether `path` or any folder above it is left out (for a list of files, such as git's).
  bool ignored_with_parents(std::string_view path) const;
  bool empty() const { return m_rules.empty(); }

 private:
  struct Rule {
    std::string base;     // the folder of its .gitignore, "" for the root
    std::string pattern;  // without '!', the anchoring '/' and the trailing '/'
    bool negated = false;
    bool dir_only = false;
    bool anchored = false;  // matched against the path under `base`, else against the last name alone
  };
  void add_line(const std::string& base, std::string_view line);
  std::vector<Rule> m_rules;
};

}  // namespace hpclaunch
