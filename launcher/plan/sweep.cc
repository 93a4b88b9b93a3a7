#include "plan/sweep.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "util/error.h"
#include "util/shell.h"
#include "util/strings.h"

namespace hpclaunch {

namespace {

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; }

// The name of a `{name}` placeholder starting at word[open] ('{'), or "" when none starts there.
std::string placeholder_at(const std::string& word, size_t open, size_t* close) {
  size_t i = open + 1;
  if (i >= word.size() || !std::isalpha(static_cast<unsigned char>(word[i]))) return {};
  while (i < word.size() && is_name_char(word[i])) ++i;
  if (i >= word.size() || word[i] != '}') return {};
  *close = i;
  return word.substr(open + 1, i - open - 1);
}

// Calls on_name for every placeholder in `word` and returns the word with each replaced by what it returns;
// `{{name}}` becomes `{name}` and `${` is left alone.
template <class F>
std::string substitute(const std::string& word, F&& on_name) {
  std::string out;
  for (size_t i = 0; i < word.size(); ++i) {
    char c = word[i];
    size_t close = 0;
    if (c == '$' && i + 1 < word.size() && word[i + 1] == '{') {
      out += "${";
      ++i;
    } else if (c == '{' && i + 1 < word.size() && word[i + 1] == '{' &&
               !placeholder_at(word, i + 1, &close).empty() && close + 1 < word.size() && word[close + 1] == '}') {
      out += word.substr(i + 1, close - i);  // {{name}} -> {name}
      i = close + 1;
    } else if (std::string name = c == '{' ? placeholder_at(word, i, &close) : ""; !name.empty()) {
      out += on_name(name);
      i = close;
    } else {
      out += c;
    }
  }
  return out;
}

// The keys some word of `command` names as a placeholder.
std::set<std::string> named_keys(const std::vector<std::string>& command) {
  std::set<std::string> names;
  for (const auto& w : command) substitute(w, [&](const std::string& n) { return names.insert(n), std::string(); });
  return names;
}

void check_axis(const SweepAxis& a) {
  if (std::string bad = check_sweep_key(a.key); !bad.empty())
    throw Error(a.origin, bad, "use letters, digits, '-' and '_', starting with a letter, e.g. --sweep lr=1e-3,3e-3");
  if (a.values.empty()) throw Error(a.origin, "'" + a.key + "' has no values", "list them: --sweep " + a.key + "=V1,V2");
  for (const auto& v : a.values)
    if (v.empty())
      throw Error(a.origin, "'" + a.key + "' has an empty value", "remove the extra comma, or quote the values in a --spec list");
}

ArrayPlan expand_sweep(const ArrayRequest& r) {
  ArrayPlan p;
  std::set<std::string> env_names;
  for (const auto& a : r.sweep) {
    check_axis(a);
    if (std::find(p.keys.begin(), p.keys.end(), a.key) != p.keys.end())
      throw Error(a.origin, "'" + a.key + "' is swept twice", "give each key once, with all its values: --sweep " + a.key + "=V1,V2");
    if (!env_names.insert(sweep_env_name(a.key)).second)
      throw Error(a.origin, "'" + a.key + "' and another key both become " + sweep_env_name(a.key),
                  "spell keys that differ only in '-' and '_' the same way");
    p.keys.push_back(a.key);
  }
  if (r.zip) {
    p.mode = "zip";
    const SweepAxis& first = r.sweep.front();
    for (const auto& a : r.sweep)
      if (a.values.size() != first.values.size())
        throw Error(r.zip_origin,
                    fmt::format("'{}' has {} value(s) but '{}' has {}", first.key, first.values.size(), a.key, a.values.size()),
                    "give every swept key the same number of values, or drop --sweep-zip for their product");
    if (first.values.size() > static_cast<size_t>(k_max_array_tasks))
      throw Error(r.zip_origin, fmt::format("{} tasks are more than {}", first.values.size(), k_max_array_tasks),
                  "split the sweep into several submissions");
    for (size_t i = 0; i < first.values.size(); ++i) {
      ArrayTask t{static_cast<int>(i), {}};
      for (const auto& a : r.sweep) t.values.emplace_back(a.key, a.values[i]);
      p.tasks.push_back(t);
    }
    return p;
  }
  p.mode = "product";
  long long count = 1;
  std::vector<std::string> sizes;
  for (const auto& a : r.sweep) {
    count *= static_cast<long long>(a.values.size());
    sizes.push_back(std::to_string(a.values.size()));
    if (count > k_max_array_tasks)
      throw Error(r.sweep.back().origin,
                  fmt::format("the product of {} value(s) is more than {} tasks", join(sizes, " x "), k_max_array_tasks),
                  "sweep fewer values, use --sweep-zip, or split the sweep into several submissions");
  }
  // The last key varies fastest, as nested loops in --sweep order.
  for (long long i = 0; i < count; ++i) {
    ArrayTask t{static_cast<int>(i), {}};
    long long rest = i;
    std::vector<std::pair<std::string, std::string>> reversed;
    for (auto a = r.sweep.rbegin(); a != r.sweep.rend(); ++a) {
      reversed.emplace_back(a->key, a->values[static_cast<size_t>(rest % static_cast<long long>(a->values.size()))]);
      rest /= static_cast<long long>(a->values.size());
    }
    t.values.assign(reversed.rbegin(), reversed.rend());
    p.tasks.push_back(t);
  }
  return p;
}

}  // namespace

std::string check_sweep_key(const std::string& key) {
  if (key.empty()) return "the key before '=' is empty";
  if (!std::isalpha(static_cast<unsigned char>(key[0]))) return "'" + key + "' does not start with a letter";
  for (char c : key)
    if (!is_name_char(c)) return "'" + key + "' has a '" + std::string(1, c) + "'";
  if (key == "task" || key == "task_dir") return "'" + key + "' is hpclaunch's own placeholder ({" + key + "})";
  return "";
}

SweepAxis parse_sweep_flag(const std::string& text) {
  SweepAxis a;
  size_t eq = text.find('=');
  if (eq == std::string::npos)
    throw Error("--sweep", "'" + text + "' has no '='", "write --sweep KEY=V1,V2,..., e.g. --sweep lr=1e-3,3e-3");
  a.key = text.substr(0, eq);
  std::string values = text.substr(eq + 1);
  if (!values.empty()) a.values = split(values, ',');
  check_axis(a);
  return a;
}

ArrayPlan expand_array(const ArrayRequest& r) {
  if (r.empty()) return {};
  if (r.count && !r.sweep.empty())
    throw Error(r.count_origin, "--array and --sweep both set the number of tasks",
                "give one: --array N for N runs of one command, or --sweep KEY=V1,V2 (e.g. --sweep seed=1,2,3)");
  if (r.zip && r.sweep.empty()) throw Error(r.zip_origin, "there is no --sweep to zip", "add --sweep KEY=V1,V2 (repeatable)");
  if (!r.count && r.sweep.empty())
    throw Error(r.max_origin, "limits the tasks of an array, but there is none", "add --array N or --sweep KEY=V1,V2");
  if (r.max_concurrent && *r.max_concurrent < 1)
    throw Error(r.max_origin, fmt::format("{} is below 1", *r.max_concurrent), "use 1 or more (tasks at once)");
  ArrayPlan p;
  if (r.count) {
    if (*r.count < 1 || *r.count > k_max_array_tasks)
      throw Error(r.count_origin, fmt::format("{} is not in 1..{}", *r.count, k_max_array_tasks),
                  "give the number of tasks, e.g. --array 4");
    p.mode = "array";
    for (int i = 0; i < *r.count; ++i) p.tasks.push_back({i, {}});
  } else {
    p = expand_sweep(r);
  }
  p.max_concurrent = r.max_concurrent.value_or(0);
  return p;
}

std::string task_dir(const std::string& job_dir, int task) { return job_dir + "/tasks/" + std::to_string(task); }

std::vector<std::string> task_command(const std::vector<std::string>& command, const ArrayPlan& array,
                                      const ArrayTask& task, const std::string& dir) {
  std::vector<std::string> keys = array.keys;
  std::vector<std::string> out;
  for (const auto& word : command)
    out.push_back(substitute(word, [&](const std::string& name) -> std::string {
      if (name == "task") return std::to_string(task.index);
      if (name == "task_dir") return dir;
      for (const auto& [k, v] : task.values)
        if (k == name) return v;
      std::vector<std::string> known = keys;
      known.insert(known.end(), {"task", "task_dir"});
      throw Error("-- " + word, "'{" + name + "}' is not a swept key nor {task} or {task_dir}" + did_you_mean(name, known),
                  keys.empty() ? "write {{" + name + "}} for a literal {" + name + "}"
                               : "sweep it (--sweep " + name + "=...), or write {{" + name + "}} for a literal {" + name + "}");
    }));
  std::set<std::string> named = named_keys(command);
  for (const auto& [k, v] : task.values)
    if (!named.count(k)) out.insert(out.end(), {"--" + k, v});
  return out;
}

std::string sweep_env_name(const std::string& key) {
  std::string name = "HPCLAUNCH_SWEEP_";
  for (char c : key) name += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

std::vector<std::pair<std::string, std::string>> task_env(const ArrayTask& task) {
  std::vector<std::pair<std::string, std::string>> env;
  for (const auto& [k, v] : task.values) env.emplace_back(sweep_env_name(k), v);
  return env;
}

std::string task_label(const SweepValues& values, int task) {
  if (values.empty()) return "task " + std::to_string(task);
  std::vector<std::string> parts;
  for (const auto& [k, v] : values) parts.push_back(k + "=" + v);
  return join(parts, " ");
}

void check_task_outputs(const std::vector<std::string>& command, const ArrayPlan& array) {
  if (array.count() < 2) return;
  static const char* const k_output_flags[] = {"--metrics", "--checkpoint-dir"};
  for (const char* flag : k_output_flags) {
    const std::string f = flag;
    std::set<std::string> values;
    bool given = false;
    for (const auto& t : array.tasks) {
      std::vector<std::string> argv = task_command(command, array, t, task_dir("JOBDIR", t.index));
      std::string value;
      for (size_t i = 0; i < argv.size(); ++i) {
        if (argv[i] == f && i + 1 < argv.size()) value = argv[i + 1], given = true;
        else if (argv[i].rfind(f + "=", 0) == 0) value = argv[i].substr(f.size() + 1), given = true;
      }
      values.insert(value);
    }
    if (given && values.size() == 1)
      throw Error("-- ... " + f, fmt::format("every task of the array would write '{}', each over the others'", *values.begin()),
                  fmt::format("put the task's directory in it: {} {{task_dir}}/{}", f, f == "--metrics" ? "metrics.jsonl" : "checkpoints"));
  }
}

std::string task_table(const std::vector<std::string>& command, const ArrayPlan& array, const std::string& job_dir) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"TASK"};
  header.insert(header.end(), array.keys.begin(), array.keys.end());
  header.push_back("COMMAND");
  rows.push_back(header);
  for (const auto& t : array.tasks) {
    std::vector<std::string> row = {std::to_string(t.index)};
    for (const auto& kv : t.values) row.push_back(kv.second);
    row.push_back(shell_join(task_command(command, array, t, task_dir(job_dir, t.index))));
    rows.push_back(row);
  }
  std::vector<size_t> width(header.size(), 0);
  for (const auto& row : rows)
    for (size_t c = 0; c + 1 < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c)
      line += c + 1 < row.size() ? fmt::format("{:<{}}  ", row[c], width[c]) : row[c];
    out += line + "\n";
  }
  return out;
}

}  // namespace hpclaunch
