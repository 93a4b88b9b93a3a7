#include "schedulers/slurm/dialect.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <regex>

#include "dialect/hostlist.h"
#include "util/error.h"
#include "util/strings.h"
#include "util/time_limit.h"

namespace hpclaunch {

namespace {

// "64G" as MB (sbatch's units: K, M (the default), G, T); 0 when it is not such an amount.
long amount_mb(const std::string& amount) {
  long long n = 0;
  std::string digits = amount;
  char unit = 'M';
  if (!digits.empty() && std::isalpha(static_cast<unsigned char>(digits.back()))) unit = digits.back(), digits.pop_back();
  if (!parse_int(digits, &n)) return 0;
  switch (unit) {
    case 'K': return static_cast<long>(n / 1024);
    case 'G': return static_cast<long>(n * 1024);
    case 'T': return static_cast<long>(n * 1024 * 1024);
    default: return static_cast<long>(n);
  }
}

bool unlimited(const std::string& v) { return v.empty() || v == "UNLIMITED" || v == "INFINITE" || v == "NONE"; }

// "gpu:a100:4(S:0-1),gpu:v100:2" -> {gpu a100 4}, {gpu v100 2}; "(null)" -> none.
std::vector<GresInfo> parse_gres(const std::string& text) {
  std::vector<GresInfo> out;
  if (text.empty() || text == "(null)") return out;
  std::string cleaned = std::regex_replace(text, std::regex("\\([^)]*\\)"), "");
  for (const auto& item : split(cleaned, ',')) {
    std::vector<std::string> parts = split(item, ':');
    if (parts.empty() || parts[0].empty()) continue;
    GresInfo g;
    g.name = parts[0];
    long long n = 1;
    if (parts.size() >= 3) {
      g.type = parts[1];
      parse_int(parts[2], &n);
    } else if (parts.size() == 2 && !parse_int(parts[1], &n)) {
      g.type = parts[1];
      n = 1;
    }
    g.count = static_cast<int>(n);
    out.push_back(g);
  }
  return out;
}

std::vector<std::string> sorted_unique(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

std::string gpu_request(const BatchRequest& p) {
  const GpuRequest& g = p.site.gpu;
  std::string typed = g.type.empty() ? std::to_string(p.gpus_per_node) : g.type + ":" + std::to_string(p.gpus_per_node);
  switch (g.style) {
    case GpuStyle::gpus_per_node: return "--gpus-per-node=" + typed;
    case GpuStyle::gres: return "--gres=gpu:" + typed;
    default: return "";
  }
}

}  // namespace

// sbatch's: the profile's per-GPU amount, or for a whole-node profile the whole node (--mem=0) or a GPU share of it,
// so that no GPU job falls to a tiny site default.
MemoryAsk SlurmDialect::memory_request(const SiteProfile& site, const Queue*, int gpus_per_node) const {
  const MemoryRequest& m = site.memory;
  const NodeShape& node = site.node;
  if (m.style == MemoryStyle::per_gpu) return {"--mem-per-gpu=" + m.amount, amount_mb(m.amount) * std::max(1, gpus_per_node)};
  if (m.style != MemoryStyle::whole_node) return {};
  if (gpus_per_node >= node.gpus || node.memory_gb <= 0 || node.gpus <= 0) return {"--mem=0", 0};
  if (m.decimal_gb) {
    const long mib = static_cast<long>(node.memory_gb) * 1000000000L / node.gpus / (1L << 20);  // rounded down
    return {fmt::format("--mem-per-gpu={}M", mib), mib * gpus_per_node};
  }
  return {fmt::format("--mem-per-gpu={}G", node.memory_gb / node.gpus), node.memory_gb / node.gpus * 1024L * gpus_per_node};
}

std::string slurm_option_since(std::string_view option) {
  // Slurm's NEWS: 24.05.0 "Add --segment to job allocation to be used in topology/block" and "Add --exclusive=topo
  // for use with topology/block"; 25.11 (FIELD-2026.md): --consolidate-segments, --spread-segments and
  // --network=unique-channel-per-segment.
  static const std::map<std::string, std::string, std::less<>> k_since = {
      {"--segment", "24.05"},
      {"--exclusive=topo", "24.05"},
      {"--consolidate-segments", "25.11"},
      {"--spread-segments", "25.11"},
      {"--network=unique-channel-per-segment", "25.11"},
  };
  auto it = k_since.find(option);
  return it == k_since.end() ? "" : it->second;
}

std::string SlurmDialect::topology_option_refusal(std::string_view option, std::string_view version) const {
  const std::string since = slurm_option_since(option);
  if (since.empty()) return fmt::format("{} is no block-topology option of Slurm's", option);
  auto have = parse_release(version);  // unknown (no scheduler_version): rendered as asked
  if (!have || *have >= *parse_release(since)) return "";
  return fmt::format("{} needs Slurm {} or later, and the site's is {}", option, since, version);
}

std::string slurm_task_job_id(const std::string& array_id, int task) { return array_id + "_" + std::to_string(task); }

std::optional<std::pair<std::vector<std::string>, int>> split_slurm_task_ref(const std::string& ref) {
  static const std::regex k_task("(.+)_([0-9]{1,9})");
  std::smatch m;
  if (std::regex_match(ref, m, k_task)) return std::make_pair(std::vector<std::string>{m[1].str()}, std::stoi(m[2].str()));
  return std::nullopt;
}

namespace {

// The geometry's own options (nodes, tasks, CPUs per task) come from the plan; a profile that set them too would
// say two different things to srun.
std::pair<std::string, std::string> rank_option_refusal(const std::string& o) {
  static const std::regex k_geometry("(-[Nnc]|--(nodes|ntasks|ntasks-per-node|cpus-per-task))(=.*|[0-9].*)?");
  if (std::regex_match(o, k_geometry))
    return {"'" + o + "' sets the geometry, which hpclaunch plans itself",
            "remove it: the nodes, tasks and CPUs per task come from node: and the job's flags"};
  if (o.empty() || o[0] != '-' || o.find_first_of(" \t\n'\"$`;&|<>") != std::string::npos)
    return {"'" + o + "' is not one srun option", "give one option a list entry, e.g. `--gpu-bind=closest`"};
  return {};
}

}  // namespace

std::vector<SchedulerOptionSpec> SlurmDialect::profile_options() const {
  return {{"rank_options", true, false, LaunchMode::srun, rank_option_refusal},
          {"whole_node_rank_options", true, true, LaunchMode::srun, rank_option_refusal}};
}

std::vector<TemplateValue> SlurmDialect::template_values(const BatchRequest& r, const ScriptPlace&) const {
  std::vector<std::string> options = r.site.scheduler_option("rank_options");
  for (const auto& o : r.site.scheduler_option("whole_node_rank_options")) options.push_back(o);
  if (options.empty()) return {};
  return {{"rank_options", " " + join(options, " ")}};
}

std::vector<std::string> SlurmDialect::directives(const BatchRequest& p, const ScriptPlace& place) const {
  std::vector<std::string> d = {
      "--job-name=" + p.job_name,
      fmt::format("--nodes={}", p.nodes),
      fmt::format("--ntasks={}", p.ntasks),
      fmt::format("--ntasks-per-node={}", p.ntasks_per_node),
      fmt::format("--cpus-per-task={}", p.cpus_per_task),
  };
  if (std::string gpus = p.gpus_per_node > 0 ? gpu_request(p) : ""; !gpus.empty()) d.push_back(gpus);
  if (!p.memory.empty()) d.push_back(p.memory);
  if (!p.constraint.empty()) d.push_back("--constraint=" + p.constraint);
  if (!p.partition.empty()) d.push_back("--partition=" + p.partition);
  if (!p.qos.empty()) d.push_back("--qos=" + p.qos);
  if (!p.account.empty()) d.push_back("--account=" + p.account);
  d.push_back("--time=" + format_slurm_time(p.time_s));
  if (!p.warning_signal.empty()) d.push_back(fmt::format("--signal=B:{}@{}", p.warning_signal, p.warning_seconds));
  if (p.segment > 0) d.push_back(fmt::format("--segment={}", p.segment));
  d.insert(d.end(), p.topology_options.begin(), p.topology_options.end());
  if (p.spares > 0) d.push_back("--no-kill");  // a failed node does not end the job: a spare takes its place
  if (p.requeue) {
    d.push_back("--requeue");
    d.push_back("--open-mode=append");  // the output of every run of the job in one file
  }
  d.push_back("--chdir=" + place.workdir);
  // An array task's output goes to its own run directory (submit creates them all): %A the array's id, %a the task.
  d.push_back(place.array ? "--output=" + place.job_dir + "/tasks/%a/slurm-%A_%a.out"
                          : "--output=" + place.job_dir + "/slurm-%j.out");
  d.insert(d.end(), place.array_directives.begin(), place.array_directives.end());
  for (const auto& x : p.directives) d.push_back(x);
  if (!p.container_image.empty())
    for (const auto& x : p.site.container.directives) d.push_back(replace_all(x, "{image}", p.container_image));
  return d;
}

std::vector<std::string> SlurmDialect::array_options(int count, int max_concurrent) const {
  std::string spec = "--array=0-" + std::to_string(count - 1);
  if (max_concurrent > 0) spec += "%" + std::to_string(max_concurrent);
  return {spec};
}

std::vector<std::string> SlurmDialect::dependency_options(const std::vector<Dependency>& after) const {
  if (after.empty()) return {};
  return {"--dependency=" + dependency_list(after)};
}

std::vector<std::string> SlurmDialect::default_account_command(const std::string& user) const {
  return {"sacctmgr", "-n", "-P", "show", "user", user, "format=DefaultAccount"};
}

std::vector<std::string> SlurmDialect::accounts_command(const std::string& user) const {
  return {"sacctmgr", "-n", "-P", "show", "assoc", "user=" + user, "format=Account,QOS"};
}

std::string SlurmDialect::parse_default_account(std::string_view out) const {
  std::string account(trim(out));
  return account.find_first_of(" \n|") == std::string::npos ? account : std::string();
}

std::string parse_sbatch_answer(const ProcessResult& answer) {
  throw_if_refused("sbatch", answer);
  std::string out(trim(answer.out));
  static const std::regex k_id("([0-9]+)(;[A-Za-z0-9_.-]+)?");
  std::smatch m;
  if (std::regex_match(out, m, k_id)) return m[1].str();
  throw failure("sbatch", "answered '" + out + "', which holds no job id", "check the scheduler's state with squeue/qstat");
}

TestVerdict parse_sbatch_test_only(const ProcessResult& answer) {
  if (answer.exit_code == 127) command_failed({"sbatch", "--test-only"}, answer, "run hpclaunch on the cluster's login node");
  TestVerdict v;
  v.accepted = answer.exit_code == 0;
  v.message = first_line(answer);
  return v;
}

std::optional<Phase> slurm_phase(std::string_view state) {
  std::string s(trim(state));
  if (size_t sp = s.find(' '); sp != std::string::npos) s = s.substr(0, sp);  // "CANCELLED by 0"
  static const std::pair<const char*, Phase> k_states[] = {
      {"PENDING", Phase::pending},       {"REQUEUED", Phase::pending},     {"REQUEUE_HOLD", Phase::pending},
      {"REQUEUE_FED", Phase::pending},   {"RESV_DEL_HOLD", Phase::pending}, {"CONFIGURING", Phase::pending},
      {"RUNNING", Phase::running},       {"COMPLETING", Phase::running},   {"SUSPENDED", Phase::running},
      {"STOPPED", Phase::running},       {"SIGNALING", Phase::running},    {"STAGE_OUT", Phase::running},
      {"RESIZING", Phase::running},      {"COMPLETED", Phase::completed},  {"CANCELLED", Phase::cancelled},
      {"TIMEOUT", Phase::timeout},       {"DEADLINE", Phase::timeout},     {"FAILED", Phase::failed},
      {"NODE_FAIL", Phase::failed},      {"BOOT_FAIL", Phase::failed},     {"OUT_OF_MEMORY", Phase::failed},
      {"PREEMPTED", Phase::failed},      {"SPECIAL_EXIT", Phase::failed},  {"REVOKED", Phase::failed},
  };
  for (const auto& [word, phase] : k_states)
    if (s == word) return phase;
  return std::nullopt;
}

std::map<std::string, std::string> scontrol_fields(std::string_view text) {
  static const std::regex k_key("^([A-Za-z][A-Za-z0-9/:_.]*)=(.*)$");
  Fields f;
  for (const auto& line : split(text, '\n')) {
    std::string last;
    for (const auto& word : split(line, ' ')) {
      if (word.empty()) continue;
      std::smatch m;
      if (std::regex_match(word, m, k_key)) {
        last = m[1].str();
        if (f.count(last)) last = "\x01";  // a repeated key: its words are not the first one's
        else f[last] = m[2].str();
      } else if (!last.empty() && last != "\x01") {
        f[last] += " " + word;
      }
    }
  }
  return f;
}

std::vector<std::string> squeue_jobs_command(const std::vector<std::string>& ids) {
  // Each field padded to its width and ended by '|' (a reason may hold spaces).
  return {"squeue", "-h", "-r", "-t", "all", "-j", join(ids, ","), "-O",
          "JobArrayID:40|,State:24|,Reason:200|,exit_code:12|"};
}

namespace {
// squeue's exit_code column: Slurm 22.05 prints the wait status (exit code << 8 | signal: scontrol's ExitCode=3:0
// is 768), 24.11 "3:0" as scontrol and sacct do (tests/unit/data/slurm-22.05 and slurm-24.11, squeue-hpclaunch.txt).
std::optional<int> squeue_exit_code(std::string_view code) {
  long long v = 0;
  if (const size_t colon = code.find(':'); colon != std::string_view::npos) {
    if (parse_int(code.substr(0, colon), &v) && v >= 0) return static_cast<int>(v);
  } else if (parse_int(code, &v) && v >= 0) {
    return static_cast<int>((v >> 8) & 0xff);
  }
  return std::nullopt;
}
}  // namespace

std::map<std::string, JobState> parse_squeue_jobs(std::string_view out) {
  std::map<std::string, JobState> jobs;
  for (const auto& line : split(out, '\n')) {
    std::vector<std::string> cols = split(line, '|');
    if (cols.size() < 4) continue;
    std::string id(trim(cols[0])), state(trim(cols[1])), reason(trim(cols[2]));
    auto phase = slurm_phase(state);
    if (id.empty() || !phase) continue;
    JobState s;
    s.phase = *phase;
    s.raw = state;
    if (reason != "None") s.reason = reason;
    if (s.finished()) s.exit_code = squeue_exit_code(trim(cols[3]));
    jobs[id] = s;
  }
  return jobs;
}

std::vector<std::string> sacct_jobs_command(const std::vector<std::string>& ids) {
  return {"sacct", "-n", "-P", "-X", "-j", join(ids, ","), "-o", "JobID,State,ExitCode"};
}

std::map<std::string, JobState> parse_sacct_jobs(std::string_view out) {
  std::map<std::string, JobState> jobs;
  for (const auto& line : split(out, '\n')) {
    std::vector<std::string> cols = split(trim(line), '|');
    if (cols.size() < 3) continue;
    auto phase = slurm_phase(cols[1]);
    if (cols[0].empty() || !phase) continue;
    JobState s;
    s.phase = *phase;
    s.raw = cols[1].substr(0, cols[1].find(' '));  // "CANCELLED by 0"
    long long v = 0;
    if (s.finished() && parse_int(cols[2].substr(0, cols[2].find(':')), &v)) s.exit_code = static_cast<int>(v);
    jobs[cols[0]] = s;
  }
  return jobs;
}

std::vector<std::string> sacct_usage_command(const std::vector<std::string>& ids) {
  return {"sacct", "-n", "-P", "-j", join(ids, ","), "-o", "JobID,Elapsed,MaxRSS,ConsumedEnergyRaw,State"};
}

std::optional<double> sacct_size(std::string_view text) {
  text = trim(text);
  if (text.empty()) return std::nullopt;
  double scale = 1;
  const std::string_view units = "KMGTP";
  if (size_t u = units.find(text.back()); u != std::string_view::npos) {
    scale = std::pow(1024.0, static_cast<double>(u + 1));
    text.remove_suffix(1);
  }
  const std::string number(text);
  char* end = nullptr;
  const double v = std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size() || !std::isfinite(v) || v < 0) return std::nullopt;
  return v * scale;
}

namespace {

// One job's lines of a usage answer, summed up.
struct SacctTally {
  std::string elapsed, state;  // the allocation's
  std::optional<double> max_rss;
  std::string max_rss_step;
  double energy = 0, step_energy = 0;
  int steps = 0, running_steps = 0;
};

// Why a job's answer has no MaxRSS, or what it leaves out. Real sacct (tests/unit/data/slurm-22.05/sacct-usage*.txt)
// leaves a step's MaxRSS empty until the step ends, and lists no step at all for a job that never started: neither
// is JobAcctGatherType's doing.
std::string usage_note(const SacctTally& t) {
  if (t.steps == 0) {
    if (t.state == "PENDING" || t.state == "REQUEUED") return "not started yet (sacct: " + t.state + ")";
    if (t.state != "RUNNING") return "never started (sacct: " + t.state + ", no steps)";
  }
  const std::string running =
      "step(s) still running: sacct records a step's MaxRSS when it ends (sstat shows a running step's)";
  if (t.running_steps > 0) return t.max_rss ? std::to_string(t.running_steps) + " " + running : running;
  return t.max_rss ? "" : "sacct records no memory use (its steps' MaxRSS: JobAcctGatherType)";
}

std::string size_text(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  size_t u = 0;
  while (bytes >= 1024 && u + 1 < std::size(units)) bytes /= 1024, ++u;
  return u == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.1f} {}", bytes, units[u]);
}

}  // namespace

std::map<std::string, JobUsage> parse_sacct_usage(std::string_view out) {
  std::map<std::string, SacctTally> tallies;
  for (const auto& line : split(out, '\n')) {
    std::vector<std::string> cols = split(trim(line), '|');
    if (cols.size() < 5 || cols[0].empty()) continue;
    const size_t dot = cols[0].find('.');
    SacctTally& t = tallies[cols[0].substr(0, dot)];
    double energy = 0;
    if (char* end = nullptr; !cols[3].empty()) {
      energy = std::strtod(cols[3].c_str(), &end);
      if (*end != '\0' || !std::isfinite(energy) || energy < 0) energy = 0;
    }
    if (dot == std::string::npos) {
      t.elapsed = cols[1];
      t.state = cols[4];
      t.energy = energy;
      continue;
    }
    ++t.steps;
    if (cols[4] == "RUNNING") ++t.running_steps;
    t.step_energy += energy;
    if (auto rss = sacct_size(cols[2]); rss && (!t.max_rss || *rss > *t.max_rss)) {
      t.max_rss = rss;
      t.max_rss_step = cols[0].substr(dot + 1);
    }
  }
  std::map<std::string, JobUsage> usage;
  for (const auto& [id, t] : tallies) {
    JobUsage& u = usage[id];
    u.note = usage_note(t);
    if (t.steps == 0 && t.state != "RUNNING") continue;  // not started: its 00:00:00 is no elapsed time
    if (!t.elapsed.empty()) u.items.emplace_back("elapsed", t.elapsed);
    if (t.max_rss) u.items.emplace_back("max RSS", size_text(*t.max_rss) + " (step " + t.max_rss_step + ")");
    if (const double e = t.energy > 0 ? t.energy : t.step_energy; e > 0) u.items.emplace_back("energy", fmt::format("{:.0f} J", e));
    u.items.emplace_back("steps", std::to_string(t.steps));
  }
  return usage;
}

bool slurm_unknown_job(const ProcessResult& r) {
  if (r.exit_code == 0 || r.exit_code == 127) return false;
  return (r.err + r.out).find("Invalid job id") != std::string::npos;
}

std::vector<PartitionInfo> parse_scontrol_partitions(std::string_view out) {
  std::vector<PartitionInfo> parts;
  for (const auto& line : split(out, '\n')) {
    Fields f = scontrol_fields(line);
    if (!f.count("PartitionName")) continue;
    PartitionInfo p;
    p.name = f["PartitionName"];
    p.is_default = f["Default"] == "YES";
    if (!unlimited(f["MaxTime"])) p.max_time_s = parse_time_limit(f["MaxTime"]).value_or(0);
    if (!unlimited(f["MaxNodes"])) p.max_nodes = field_int(f, "MaxNodes");
    if (!f["Nodes"].empty() && f["Nodes"] != "(null)") p.nodes = expand_hostlist(f["Nodes"], "scontrol Nodes=");
    parts.push_back(p);
  }
  return parts;
}

std::vector<BlockInfo> parse_scontrol_topology(std::string_view out) {
  std::vector<BlockInfo> blocks;
  for (const auto& line : split(out, '\n')) {
    Fields f = scontrol_fields(line);
    if (!f.count("BlockName")) continue;
    BlockInfo b;
    b.name = f["BlockName"];
    if (!f["Nodes"].empty() && f["Nodes"] != "(null)") b.nodes = expand_hostlist(f["Nodes"], "scontrol Nodes=");
    b.block_size = field_int(f, "BlockSize");
    blocks.push_back(b);
  }
  return blocks;
}

std::string parse_slurm_version(std::string_view out) {
  static const std::regex k_version("slurm(-wlm)? ([0-9]+\\.[0-9]+(\\.[0-9]+)?)\\s*");
  std::match_results<std::string_view::const_iterator> m;
  return std::regex_match(out.begin(), out.end(), m, k_version) ? m[2].str() : "";
}

std::vector<NodeInfo> parse_scontrol_nodes(std::string_view out) {
  std::vector<NodeInfo> nodes;
  for (const auto& line : split(out, '\n')) {
    Fields f = scontrol_fields(line);
    if (!f.count("NodeName")) continue;
    NodeInfo n;
    n.name = f["NodeName"];
    n.arch = field_text(f, "Arch");
    n.cpus = field_int(f, "CPUTot");
    n.sockets = field_int(f, "Sockets", 1);
    n.cores_per_socket = field_int(f, "CoresPerSocket", n.cpus);
    n.threads_per_core = field_int(f, "ThreadsPerCore", 1);
    n.memory_mb = field_int(f, "RealMemory");
    n.gres = parse_gres(field_text(f, "Gres"));
    std::string features = field_text(f, "AvailableFeatures");
    if (!features.empty() && features != "(null)")
      for (const auto& feat : split(features, ','))
        if (!feat.empty()) n.features.push_back(feat);
    nodes.push_back(n);
  }
  return nodes;
}

void parse_sacctmgr_assoc(std::string_view out, std::vector<std::string>* accounts, std::vector<std::string>* qos) {
  for (const auto& line : split(out, '\n')) {
    std::vector<std::string> cols = split(trim(line), '|');
    if (cols.empty() || cols[0].empty()) continue;
    accounts->push_back(cols[0]);
    if (cols.size() > 1)
      for (const auto& q : split(cols[1], ','))
        if (!q.empty()) qos->push_back(q);
  }
  *accounts = sorted_unique(*accounts);
  *qos = sorted_unique(*qos);
}

const SchedulerDialect& slurm_dialect() {
  static const SlurmDialect dialect;
  return dialect;
}

}  // namespace hpclaunch
