// The faces' shared parts: which face this job has, and the checks every rank reader makes.
#include "dialect/in_job.h"

#include <fmt/core.h>

#include "dialect/dialect.h"
#include "dialect/hostlist.h"
#include "site/accelerator.h"
#include "util/strings.h"

namespace hpclaunch {

namespace {

constexpr long long k_max_tasks = 10'000'000;

}  // namespace

std::vector<std::string> InJobFace::step_nodes(const Env& env, const FileReader& read_file) const {
  return job_nodes(env, read_file);
}

std::vector<std::string> InJobFace::parse_node_list(std::string_view out) const {
  std::vector<std::string> nodes;
  std::string words(out);
  for (char& c : words)
    if (c == '\n' || c == '\t') c = ' ';
  for (const auto& word : split(words, ' '))
    if (!word.empty())
      for (auto& node : expand_hostlist(word, std::string(name()) + "'s node list")) nodes.push_back(std::move(node));
  return nodes;
}

std::vector<std::string> job_nodes_of(const InJobFace& face, const Env& env, const FileReader& read_file,
                                      const CommandReader& run, bool step) {
  std::vector<std::string> nodes = step ? face.step_nodes(env, read_file) : face.job_nodes(env, read_file);
  const std::vector<std::string> command = face.node_list_command(env);
  if (!nodes.empty() || command.empty()) return nodes;
  if (!run)
    throw Error(join(command, " "), std::string(face.name()) + " names its nodes only through this command, and none "
                "may be run here", "ask for the node list where the job runs (hpclaunch exec, agent)");
  return face.parse_node_list(run(command));
}

std::optional<int> InJobFace::gpu_count(const Env& env) const {
  if (auto list = gpu_list(env)) return count_device_list(*list);
  if (auto list = visible_device_list(env, device_visibility(accelerator_from_env(env)))) return count_device_list(*list);
  return std::nullopt;
}

const SchedulerDialect* job_dialect(const Env& env) {
  for (const SchedulerDialect* d : all_dialects())  // innermost first
    if (d->in_job().inside(env)) return d;
  return nullptr;
}

const InJobFace* job_face(const Env& env) {
  const SchedulerDialect* d = job_dialect(env);
  return d ? &d->in_job() : nullptr;
}

std::vector<std::pair<std::string, std::string>> neutral_job_vars(const Env& env, std::optional<int> node_rank) {
  std::vector<std::pair<std::string, std::string>> out;
  const InJobFace* face = job_face(env);
  if (!face) return out;
  std::string job = face->job_id(env);
  if (!job.empty()) out.emplace_back("HPCLAUNCH_JOB_ID", job);
  if (auto task = face->array_task(env)) {
    out.emplace_back("HPCLAUNCH_ARRAY_JOB_ID", task->array_id);
    out.emplace_back("HPCLAUNCH_ARRAY_TASK_ID", std::to_string(task->index));
  } else if (auto index = lenient_count(env, "HPCLAUNCH_ARRAY_TASK"); index && !job.empty()) {
    // The local runner's job id is the array's; the task's index is the one it gave the script.
    out.emplace_back("HPCLAUNCH_ARRAY_JOB_ID", job);
    out.emplace_back("HPCLAUNCH_ARRAY_TASK_ID", std::to_string(*index));
  }
  std::optional<int> rank = face->node_rank(env);
  if (!rank) rank = node_rank;
  if (rank && *rank >= 0) out.emplace_back("HPCLAUNCH_NODE_RANK", std::to_string(*rank));
  if (std::string node = face->node_name(env); !node.empty()) out.emplace_back("HPCLAUNCH_NODENAME", node);
  return out;
}

std::optional<int> lenient_count(const Env& env, std::string_view name) {
  long long v = 0;
  auto s = env_get(env, name);
  if (!s || !parse_int(trim(*s), &v)) return std::nullopt;
  return static_cast<int>(v);
}

int count_device_list(const std::string& list) {
  int n = 0;
  for (const auto& id : split(list, ',')) {
    auto t = trim(id);
    if (!t.empty() && t != "NoDevFiles") ++n;
  }
  return n;
}

Error inconsistent_ranks(std::string_view source, const std::string& what) {
  source.remove_prefix(source.starts_with("an ") ? 3 : source.starts_with("a ") ? 2 : 0);
  return Error(std::string(source), what, k_launcher_fix);
}

int require_rank_int(const Env& env, std::string_view name, long long min, std::string_view source) {
  return static_cast<int>(env_require_int(env, name, min, k_max_tasks, source));
}

std::optional<int> optional_rank_int(const Env& env, std::string_view name, long long min) {
  auto v = env_int(env, name, min, k_max_tasks);
  if (!v) return std::nullopt;
  return static_cast<int>(*v);
}

void check_task_ranks(const TaskRanks& r, std::string_view source, std::string_view rank_var,
                      std::string_view size_var, std::string_view local_var, std::string_view local_size_var) {
  if (r.world_size < 1) throw inconsistent_ranks(source, fmt::format("{}={} is not a positive size", size_var, r.world_size));
  if (r.rank >= r.world_size)
    throw inconsistent_ranks(source, fmt::format("{}={} is not below {}={}", rank_var, r.rank, size_var, r.world_size));
  if (r.local_world_size < 1 || r.local_world_size > r.world_size)
    throw inconsistent_ranks(source, fmt::format("{}={} is not in [1, {}={}]", local_size_var, r.local_world_size,
                                                 size_var, r.world_size));
  if (r.local_rank >= r.local_world_size)
    throw inconsistent_ranks(source, fmt::format("{}={} is not below {}={}", local_var, r.local_rank, local_size_var,
                                                 r.local_world_size));
}

void derive_node_rank(TaskRanks* r, std::optional<int> num_nodes, Placement placement) {
  int nodes = num_nodes.value_or(r->world_size % r->local_world_size == 0 ? r->world_size / r->local_world_size : -1);
  r->num_nodes = nodes;
  r->node_rank = -1;
  if (nodes <= 0 || nodes * r->local_world_size != r->world_size) return;
  if (placement == Placement::block && (r->rank - r->local_rank) % r->local_world_size == 0)
    r->node_rank = (r->rank - r->local_rank) / r->local_world_size;
  if (placement == Placement::round_robin && r->rank / nodes == r->local_rank) r->node_rank = r->rank % nodes;
}

}  // namespace hpclaunch
