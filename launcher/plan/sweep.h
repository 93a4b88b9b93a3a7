// Sweeps and arrays: `--array N` or `--sweep KEY=V1,V2,...` (repeatable; the cartesian product, or `--sweep-zip`)
// become the tasks of one scheduler array job. Each task gets its values in its command (`{key}` placeholders, or
// `--key VALUE` appended), in its environment (HPCLAUNCH_SWEEP_KEY) and its own run directory (JOBDIR/tasks/I).
// Pure: make_plan expands the request, render writes the tasks into the script, submit writes their task.json.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hpclaunch {

// The most tasks one array may have: every task's rendezvous port is the array's plus its index
// (runtime/rendezvous.h), unique within this span; PBS Pro's default max_array_size is the same.
inline constexpr int k_max_array_tasks = 10000;

// One swept key with its values, and where it was given, for errors ("--sweep", "spec.yaml:4:3").
struct SweepAxis {
  std::string key;
  std::vector<std::string> values;
  std::string origin = "--sweep";
};

// What the user asked for (part of JobRequest).
struct ArrayRequest {
  std::optional<int> count;           // --array N
  std::vector<SweepAxis> sweep;       // --sweep, in order
  bool zip = false;                   // --sweep-zip: task i takes the i-th value of every key
  std::optional<int> max_concurrent;  // --max-concurrent M
  // Where each was given, for errors: the flag, or the spec file's position.
  std::string count_origin = "--array", zip_origin = "--sweep-zip", max_origin = "--max-concurrent";
  bool empty() const { return !count && sweep.empty() && !zip && !max_concurrent; }
};

using SweepValues = std::vector<std::pair<std::string, std::string>>;  // key -> value, in --sweep order

struct ArrayTask {
  int index = 0;
  SweepValues values;
};

// The planned array; tasks.empty() for a single job.
struct ArrayPlan {
  std::vector<ArrayTask> tasks;
  std::vector<std::string> keys;
  int max_concurrent = 0;  // 0: the scheduler's choice (the local site: one after another)
  std::string mode;        // "array", "product" or "zip"
  bool active() const { return !tasks.empty(); }
  int count() const { return static_cast<int>(tasks.size()); }
};

// "lr=1e-3,3e-3" -> {lr, [1e-3, 3e-3]}. Throws Error naming --sweep for a missing '=', a bad key, an empty value.
SweepAxis parse_sweep_flag(const std::string& text);

// Checks a key (letters, digits, '-' and '_', starting with a letter): "" when fine, else what is wrong.
std::string check_sweep_key(const std::string& key);

// The tasks the request asks for: none for an empty request. Throws Error naming the flag (or spec position).
ArrayPlan expand_array(const ArrayRequest& request);

// The task's run directory under the array's job directory.
std::string task_dir(const std::string& job_dir, int task);

// The task's command: `{key}` in any word becomes the task's value, `{task}` its index and `{task_dir}` its run
// directory; a key that no word names is appended as `--key VALUE`. `{{name}}` is a literal `{name}` and `${...}`
// is left to the shell. Throws Error naming the word for a `{name}` that is none of these.
std::vector<std::string> task_command(const std::vector<std::string>& command, const ArrayPlan& array,
                                      const ArrayTask& task, const std::string& task_dir);

// HPCLAUNCH_SWEEP_LR for key "lr" (upper case, '-' as '_').
std::string sweep_env_name(const std::string& key);
// The task's sweep variables, in key order.
std::vector<std::pair<std::string, std::string>> task_env(const ArrayTask& task);

// "lr=0.001 bs=64" (a plain --array task: "task 3"): the task in a legend or a table.
std::string task_label(const SweepValues& values, int task);

// Refuses an array whose tasks would all write the same file through an option of hpclaunch-train that names one
// (--metrics, --checkpoint-dir): each would overwrite the others' (and resume from them).
void check_task_outputs(const std::vector<std::string>& command, const ArrayPlan& array);

// The table `--dry-run` prints: TASK, one column per key, COMMAND.
std::string task_table(const std::vector<std::string>& command, const ArrayPlan& array, const std::string& job_dir);

}  // namespace hpclaunch
