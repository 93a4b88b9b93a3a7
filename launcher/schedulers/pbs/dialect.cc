#include "schedulers/pbs/dialect.h"

#include <signal.h>

#include <cctype>
#include <fmt/core.h>
#include <map>
#include <regex>

#include "schedulers/slurm/dialect.h"
#include "util/error.h"
#include "util/strings.h"
#include "util/time_limit.h"

namespace hpclaunch {

namespace {

// The value of `key = value` in qstat -f output (continuation lines are not needed for the keys read here).
std::optional<std::string> qstat_field(std::string_view out, std::string_view key) {
  for (const auto& line : split(out, '\n'))
    if (auto f = pbs_field(line); f && f->first == key) return f->second;
  return std::nullopt;
}

// `key = value` blocks (pbsnodes -av, qstat -Qf): the header line of each block, then its indented fields.
std::vector<std::pair<std::string, Fields>> pbs_blocks(std::string_view out, std::string_view header_prefix) {
  std::vector<std::pair<std::string, Fields>> blocks;
  for (const auto& raw : split(out, '\n')) {
    if (raw.empty()) continue;
    bool indented = raw[0] == ' ' || raw[0] == '\t';
    if (!indented) {
      std::string name(trim(raw));
      if (!header_prefix.empty()) {
        if (name.rfind(header_prefix, 0) != 0) continue;
        name = std::string(trim(std::string_view(name).substr(header_prefix.size())));
      }
      blocks.push_back({name, {}});
      continue;
    }
    auto f = pbs_field(raw);
    if (!f || blocks.empty()) continue;
    blocks.back().second[f->first] = f->second;
  }
  return blocks;
}

// PBS memory "527672492kb", "256gb", "1tb" -> MiB.
long pbs_memory_mb(const std::string& text) {
  std::smatch m;
  static const std::regex k_mem("([0-9]+)\\s*([kmgt]?)b?", std::regex::icase);
  if (!std::regex_match(text, m, k_mem)) return 0;
  long long v = 0;
  parse_int(m[1].str(), &v);
  char unit = m[2].length() ? static_cast<char>(std::tolower(m[2].str()[0])) : 'b';
  switch (unit) {
    case 'k': return static_cast<long>(v / 1024);
    case 'm': return static_cast<long>(v);
    case 'g': return static_cast<long>(v * 1024);
    case 't': return static_cast<long>(v * 1024 * 1024);
    default: return static_cast<long>(v / (1024 * 1024));
  }
}

}  // namespace

// A shared queue's chunk mem= (a GPU share of what its nodes give); Gadi's totals ask a GPU share of the node (the
// script's mem= is the sum over nodes, written with the totals).
MemoryAsk PbsDialect::memory_request(const SiteProfile& site, const Queue* queue, int gpus_per_node) const {
  const NodeShape& node = site.node;
  auto share_gb = [&](int node_gb) { return node.gpus > 0 && gpus_per_node > 0 ? node_gb * gpus_per_node / node.gpus : node_gb; };
  if (queue && queue->memory_gb > 0 && site.gpu.style != GpuStyle::pbs_totals)
    return {fmt::format("mem={}GB", share_gb(queue->memory_gb)), share_gb(queue->memory_gb) * 1024L};
  if (site.gpu.style == GpuStyle::pbs_totals && site.memory.style == MemoryStyle::pbs_chunk && node.memory_gb > 0)
    return {"", share_gb(node.memory_gb) * 1024L};
  return {};
}

std::vector<SchedulerOptionSpec> PbsDialect::profile_options() const {
  auto cpu_list = [](const std::string& list) -> std::pair<std::string, std::string> {
    static const std::regex k_cpu_list("list(:[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*)+");
    if (std::regex_match(list, k_cpu_list)) return {};
    return {"'" + list + "' is not a PALS CPU list",
            "write `pals_cpu_bind: \"list:4-7:8-11\"` (one CPU set per rank of a node, ':' between them)"};
  };
  return {{"chunk_extra", false, false, std::nullopt, nullptr}, {"pals_cpu_bind", false, true, LaunchMode::pals, cpu_list}};
}

std::vector<TemplateValue> PbsDialect::template_values(const BatchRequest& r, const ScriptPlace&) const {
  const std::string cpus = r.site.scheduler_text("pals_cpu_bind");
  if (cpus.empty()) return {};
  return {{"pals_cpu_list", cpus}};
}

std::vector<std::string> PbsDialect::directives(const BatchRequest& p, const ScriptPlace& place) const {
  // One -l line as in the Sockeye seed: walltime and the select chunk (one chunk per node).
  std::string select = fmt::format("select={}:ncpus={}", p.nodes, p.cpus_per_node);
  // Style none asks no ngpus: the whole node comes with its GPUs, as on ALCF Aurora, whose docs ask select=N alone
  // and whose PBS never runs a chunk asking more GPUs than it counts on a node.
  if (p.gpus_per_node > 0 && p.site.gpu.style != GpuStyle::none) select += fmt::format(":ngpus={}", p.gpus_per_node);
  // PALS places --ppn ranks per node itself, but PBS sizes the job's MPI slots from mpiprocs (NCAR's GPU form).
  if (p.launcher == LaunchMode::pals) select += fmt::format(":mpiprocs={}", p.ntasks_per_node);
  if (!p.memory.empty()) select += ":" + p.memory;  // a shared queue's mem= (memory_request)
  if (!p.site.scheduler_text("chunk_extra").empty()) select += ":" + p.site.scheduler_text("chunk_extra");
  if (p.site.gpu.style == GpuStyle::pbs_totals) {
    // NCI Gadi asks the job's totals, not chunks: ncpus, ngpus and mem summed over its nodes.
    select = fmt::format("ncpus={}", p.nodes * p.cpus_per_node);
    if (p.gpus_per_node > 0) select += fmt::format(",ngpus={}", p.nodes * p.gpus_per_node);
    // memory_request's GPU share of a node, summed over the nodes.
    if (p.memory_mb_per_node > 0) select += fmt::format(",mem={}GB", p.nodes * (p.memory_mb_per_node / 1024));
    if (!p.site.scheduler_text("chunk_extra").empty()) select += "," + p.site.scheduler_text("chunk_extra");
  }
  std::vector<std::string> d = {"-l walltime=" + format_pbs_time(p.time_s) + "," + select};
  if (!p.account.empty()) d.push_back(p.site.account.flag + " " + p.account);
  d.push_back("-N " + p.job_name);
  if (!p.partition.empty()) d.push_back("-q " + p.partition);
  d.push_back("-j oe");
  // PBS puts a subjob's index where ^array_index^ stands (OpenPBS src/server/array_func.c, subst_array_index).
  d.push_back(place.array ? "-o " + place.job_dir + "/tasks/^array_index^/output.log" : "-o " + place.job_dir + "/");
  d.insert(d.end(), place.array_directives.begin(), place.array_directives.end());
  for (const auto& x : p.directives) d.push_back(x);
  if (!p.container_image.empty())
    for (const auto& x : p.site.container.directives) d.push_back(replace_all(x, "{image}", p.container_image));
  return d;
}

std::vector<std::string> PbsDialect::array_options(int count, int max_concurrent) const {
  // qsub takes -J X-Y[:Z] with X < Y only (OpenPBS src/lib/Libcmds/chk_Jrange.c): one task is 0-1 in steps of 2.
  // `%M` sets the job's max_run_subjobs, at most M subjobs at once (OpenPBS qsub(1B), since 22.05: commit 50d9114;
  // docs/sweeps.md says what is verified of PBS Professional).
  std::string range = count == 1 ? "0-1:2" : "0-" + std::to_string(count - 1);
  if (max_concurrent > 0) range += "%" + std::to_string(max_concurrent);
  return {"-J " + range};
}

std::vector<std::string> PbsDialect::dependency_options(const std::vector<Dependency>& after) const {
  if (after.empty()) return {};
  return {"-W depend=" + dependency_list(after)};
}

std::string PbsDialect::task_job_id(const std::string& array_id, int task) const {
  size_t brackets = array_id.find("[]");
  if (brackets != std::string::npos) return array_id.substr(0, brackets + 1) + std::to_string(task) + array_id.substr(brackets + 1);
  return slurm_task_job_id(array_id, task);  // an id qsub wrote without [] (none known): as Slurm writes it
}

std::optional<std::pair<std::vector<std::string>, int>> PbsDialect::split_task_ref(const std::string& ref) const {
  // PBS's 1234[3].server names the array 1234[].server; 1234[3] also the array 1234 (as Slurm writes it).
  static const std::regex k_task("(.*[^\\[])\\[([0-9]{1,9})\\](.*)");
  std::smatch m;
  if (std::regex_match(ref, m, k_task))
    return std::make_pair(std::vector<std::string>{m[1].str() + "[]" + m[3].str(), m[1].str() + m[3].str()}, std::stoi(m[2].str()));
  return std::nullopt;
}

std::optional<std::pair<std::string, std::string>> pbs_field(std::string_view line) {
  std::string_view l = trim(line);
  size_t eq = l.find(" = ");
  if (eq == std::string_view::npos) return std::nullopt;
  return std::make_pair(std::string(trim(l.substr(0, eq))), std::string(trim(l.substr(eq + 3))));
}

std::string pbs_numeric_prefix(const std::string& id) {
  size_t n = 0;
  while (n < id.size() && std::isdigit(static_cast<unsigned char>(id[n]))) ++n;
  return id.substr(0, n);
}

std::string parse_qsub_answer(const ProcessResult& answer) {
  throw_if_refused("qsub", answer);
  std::string out(trim(answer.out));
  static const std::regex k_id("([0-9]+(\\[[0-9]*\\])?)(\\.[A-Za-z0-9_.-]+)?");
  if (std::regex_match(out, k_id)) return out;
  throw failure("qsub", "answered '" + out + "', which holds no job id", "check the scheduler's state with squeue/qstat");
}

std::optional<JobState> parse_qstat_full(std::string_view out) {
  auto state = qstat_field(out, "job_state");
  if (!state || state->empty()) return std::nullopt;
  JobState s;
  s.raw = *state;
  auto exit = qstat_field(out, "Exit_status");
  if (!exit) exit = qstat_field(out, "exit_status");  // Torque
  long long code = 0;
  bool has_code = exit && parse_int(*exit, &code);
  if (has_code) s.exit_code = static_cast<int>(code);
  switch ((*state)[0]) {
    case 'Q': case 'H': case 'W': case 'T': case 'M':
      s.phase = Phase::pending;
      break;
    case 'R': case 'E': case 'S': case 'U': case 'B':
      s.phase = Phase::running;
      break;
    case 'F': case 'X': case 'C':
      // PBS Pro: a job killed by signal N exits 256+N (qdel sends SIGTERM); negative codes are the server's
      // own (e.g. walltime exceeded).
      if (!has_code) s.phase = Phase::finished_unknown;
      else if (code == 0) s.phase = Phase::completed;
      else if (code == 256 + SIGTERM || code == 256 + SIGKILL) s.phase = Phase::cancelled;
      else s.phase = Phase::failed;
      break;
    default:
      return std::nullopt;
  }
  if (auto comment = qstat_field(out, "comment")) s.reason = *comment;
  return s;
}

std::map<std::string, JobState> parse_qstat_jobs(std::string_view out) {
  std::map<std::string, JobState> jobs;
  std::string id, block;
  auto flush = [&] {
    if (!id.empty())
      if (auto s = parse_qstat_full(block)) jobs[id] = *s;
    block.clear();
  };
  for (const auto& line : split(out, '\n')) {
    if (line.rfind("Job Id:", 0) == 0) {
      flush();
      id = std::string(trim(std::string_view(line).substr(7)));
      continue;
    }
    block += line + "\n";
  }
  flush();
  return jobs;
}

std::string pbs_id_key(const std::string& id) { return id.substr(0, id.find('.')); }

bool pbs_no_history(const ProcessResult& r) {
  return r.exit_code != 0 && r.exit_code != 127 &&
         (r.err.find("invalid option") != std::string::npos || r.err.find("usage") != std::string::npos);
}

bool pbs_unknown_job(const ProcessResult& r) {
  if (r.exit_code == 0 || r.exit_code == 127) return false;
  std::string text = r.err + r.out;
  return text.find("Unknown Job Id") != std::string::npos || text.find("Job has finished") != std::string::npos;
}

std::vector<NodeInfo> parse_pbsnodes(std::string_view out) {
  std::vector<NodeInfo> nodes;
  for (auto& [name, f] : pbs_blocks(out, "")) {
    NodeInfo n;
    n.name = name;
    n.cpus = field_int(f, "resources_available.ncpus", field_int(f, "pcpus"));
    n.sockets = 1;
    n.cores_per_socket = n.cpus;  // PBS does not tell cores from hardware threads
    n.memory_mb = pbs_memory_mb(field_text(f, "resources_available.mem"));
    n.arch = field_text(f, "resources_available.arch");
    if (int g = field_int(f, "resources_available.ngpus"); g > 0) n.gres.push_back({"gpu", "", g});
    for (const auto& [key, value] : f)
      if (key.rfind("resources_available.", 0) == 0 && value == "True")
        n.features.push_back(key.substr(std::string("resources_available.").size()));
    nodes.push_back(n);
  }
  return nodes;
}

std::vector<PartitionInfo> parse_qstat_queues(std::string_view out) {
  std::vector<PartitionInfo> queues;
  for (auto& [name, f] : pbs_blocks(out, "Queue:")) {
    if (!f.count("queue_type") || f["queue_type"] != "Execution") continue;
    PartitionInfo q;
    q.name = name;
    if (f.count("resources_max.walltime")) q.max_time_s = parse_time_limit(f["resources_max.walltime"]).value_or(0);
    q.max_nodes = field_int(f, "resources_max.nodect");
    queues.push_back(q);
  }
  return queues;
}

const SchedulerDialect& pbs_dialect() {
  static const PbsDialect dialect;
  return dialect;
}

}  // namespace hpclaunch
