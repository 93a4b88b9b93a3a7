#include "agent/agent_options.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>

#include "util/error.h"
#include "util/strings.h"
#include "util/warning_signal.h"

namespace hpclaunch {

namespace {

int parse_count(const std::string& flag, const std::string& s, int min) {
  long long v = 0;
  if (!parse_int(trim(s), &v) || v < min)
    throw Error(flag, fmt::format("'{}' is not a whole number of at least {}", s, min));
  return static_cast<int>(v);
}

void parse_nnodes(const std::string& s, AgentOptions* o) {
  auto parts = split(s, ':');
  if (parts.size() > 2) throw Error("--nnodes", "'" + s + "' is neither N nor MIN:MAX");
  o->min_nodes = parse_count("--nnodes", parts[0], 1);
  o->max_nodes = parts.size() == 2 ? parse_count("--nnodes", parts[1], 1) : o->min_nodes;
  if (o->min_nodes > o->max_nodes) throw Error("--nnodes", "MIN " + parts[0] + " is more than MAX " + parts[1]);
}

int parse_nproc(const std::string& s, const std::optional<int>& job_gpus, const MachineInfo& m) {
  int gpus = job_gpus.value_or(m.gpus);
  if (s == "gpu") {
    if (gpus < 1) throw Error("--nproc-per-node", "'gpu' but no GPU is visible", "give a number instead");
    return gpus;
  }
  if (s == "xpu") {
    if (m.xpus < 1) throw Error("--nproc-per-node", "'xpu' but no Intel GPU is visible", "give a number instead");
    return m.xpus;
  }
  if (s == "cpu") return std::max(1, m.cpus);
  if (s == "auto") return gpus > 0 ? gpus : m.xpus > 0 ? m.xpus : std::max(1, m.cpus);  // torchrun's order
  return parse_count("--nproc-per-node", s, 1);
}

void parse_endpoint(const std::string& s, AgentOptions* o) {
  auto colon = s.rfind(':');
  std::string host = colon == std::string::npos ? s : s.substr(0, colon);
  if (host.size() > 1 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host.empty()) throw Error("--rdzv-endpoint", "'" + s + "' has no host", "write HOST:PORT");
  o->rdzv_host = host;
  if (colon != std::string::npos) o->rdzv_port = parse_count("--rdzv-endpoint", s.substr(colon + 1), 1);
  if (o->rdzv_port > 65535) throw Error("--rdzv-endpoint", "port " + s.substr(colon + 1) + " is above 65535");
}

// A whole string that is a number of seconds, at least 0; nullopt otherwise ("5x", "soon", "-1").
std::optional<double> parse_seconds(const std::string& v) {
  try {
    size_t used = 0;
    double d = std::stod(v, &used);
    if (used == v.size() && d >= 0) return d;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

double conf_seconds(const std::string& key, const std::string& v) {
  auto d = parse_seconds(v);
  if (!d || *d <= 0) throw Error("--rdzv-conf", key + "=" + v + " is not a positive number of seconds");
  return *d;
}

// A --rdzv-conf boolean, as torchrun's RendezvousParameters.get_as_bool reads one (any case).
bool conf_bool(const std::string& key, const std::string& v) {
  static const std::set<std::string> k_true{"1", "true", "t", "yes", "y"}, k_false{"0", "false", "f", "no", "n"};
  const std::string lower = ascii_lower(v);
  if (k_true.count(lower)) return true;
  if (!k_false.count(lower)) throw Error("--rdzv-conf", key + "=" + v + " is not true or false");
  return false;
}

// torchrun's --rdzv-conf K=V,... onto the agent's own timeouts. is_host, close_timeout and read_timeout are
// checked but change nothing: node rank 0 always serves the store, and a round closes when it is full.
// use_libuv=false: torchrun's workers then share its store, which is no libuv server; ours build their own
// store, so they get USE_LIBUV=0 (what a LibTorch built without libuv needs: Debian 13's, the Windows wheels).
void parse_rdzv_conf(const std::string& s, AgentOptions* o) {
  double interval = 5, attempts = 3;
  bool keep_alive = false;
  for (const auto& item : split(s, ',')) {
    if (trim(item).empty()) continue;
    auto eq = item.find('=');
    std::string key(trim(item.substr(0, eq))), v(eq == std::string::npos ? "" : trim(item.substr(eq + 1)));
    if (key == "timeout" || key == "join_timeout") o->join_timeout_s = conf_seconds(key, v);
    else if (key == "last_call_timeout") o->last_call_s = conf_seconds(key, v);
    else if (key == "close_timeout" || key == "read_timeout") conf_seconds(key, v);
    else if (key == "keep_alive_interval") interval = conf_seconds(key, v), keep_alive = true;
    else if (key == "keep_alive_max_attempt") attempts = conf_seconds(key, v), keep_alive = true;
    else if (key == "is_host") conf_bool(key, v);
    else if (key == "use_libuv") o->use_libuv = conf_bool(key, v);
    else
      throw Error("--rdzv-conf", "unknown key '" + key + "'",
                  "known: timeout, join_timeout, last_call_timeout, close_timeout, read_timeout, is_host, "
                  "use_libuv, keep_alive_interval, keep_alive_max_attempt");
  }
  if (keep_alive) o->heartbeat_timeout_s = interval * attempts;
}

std::set<int> parse_rank_list(const std::string& s) {
  std::set<int> out;
  for (const auto& r : split(s, ',')) out.insert(parse_count("--local-ranks-filter", r, 0));
  return out;
}

std::string env_or(const EnvMap& env, const char* name, std::string fallback = {}) {
  auto it = env.find(name);
  return it == env.end() || it->second.empty() ? fallback : it->second;
}

}  // namespace

int stream_mask(const std::string& spec, int local_rank) {
  long long v = 0;
  if (parse_int(spec, &v)) return static_cast<int>(v);
  for (const auto& item : split(spec, ',')) {
    auto kv = split(item, ':');
    long long r = 0;
    if (kv.size() == 2 && parse_int(trim(kv[0]), &r) && r == local_rank && parse_int(trim(kv[1]), &v))
      return static_cast<int>(v);
  }
  return 0;
}

StreamRoute stream_route(const AgentOptions& o, int local_rank, int stream) {
  const int bit = 1 << stream;
  const bool redirected = stream_mask(o.redirects, local_rank) & bit, teed = stream_mask(o.tee, local_rank) & bit;
  const bool shown = o.local_ranks_filter.empty() || o.local_ranks_filter.count(local_rank);
  return {/*file=*/redirected || teed, /*console=*/shown && (teed || !redirected), /*duplicate=*/shown && teed};
}

std::string line_prefix(const AgentOptions& o, int local_rank, int rank) {
  if (!o.log_line_prefix_given) return fmt::format("[{}:{}] ", o.host, rank);
  const std::map<std::string, std::string> macros = {
      {"role_name", o.role}, {"local_rank", std::to_string(local_rank)}, {"rank", std::to_string(rank)},
      {"hostname", o.host}};
  const std::string& t = o.log_line_prefix_template;
  auto ident = [](char c, bool first) {
    auto u = static_cast<unsigned char>(c);
    return c == '_' || std::isalpha(u) || (!first && std::isdigit(u));
  };
  std::string out;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] != '$' || i + 1 == t.size()) {
      out += t[i];
      continue;
    }
    if (t[i + 1] == '$') {
      out += '$', ++i;
      continue;
    }
    const bool braced = t[i + 1] == '{';
    size_t start = i + 1 + braced, end = start;
    while (end < t.size() && ident(t[end], end == start)) ++end;
    auto it = macros.find(t.substr(start, end - start));
    if (it == macros.end() || (braced && (end == t.size() || t[end] != '}'))) {
      out += t[i];  // not a macro of ours: kept as written
      continue;
    }
    out += it->second;
    i = end - 1 + braced;
  }
  return out;
}

void check_stream_spec(const std::string& flag, const std::string& spec) {
  auto bad = [&] {
    return Error(flag, "'" + spec + "' is not 0-3 or LOCAL_RANK:0-3,...", "0 none, 1 stdout, 2 stderr, 3 both");
  };
  long long v = 0;
  if (parse_int(spec, &v)) {
    if (v < 0 || v > 3) throw bad();
    return;
  }
  for (const auto& item : split(spec, ',')) {
    auto kv = split(item, ':');
    long long r = 0;
    if (kv.size() != 2 || !parse_int(trim(kv[0]), &r) || r < 0 || !parse_int(trim(kv[1]), &v) || v < 0 || v > 3)
      throw bad();
  }
}

AgentArgv split_agent_argv(const std::vector<std::string>& args, AgentFace face) {
  auto dashdash = face == AgentFace::torchrun ? args.end() : std::find(args.begin(), args.end(), "--");
  AgentArgv a;
  a.flags.assign(args.begin(), dashdash);
  if (dashdash != args.end()) a.after_separator.assign(dashdash + 1, args.end());
  return a;
}

std::vector<std::string> worker_command_of(const AgentFlags& flags, AgentFace face) {
  auto rest = flags.rest.begin();
  if (face == AgentFace::torchrun && rest != flags.rest.end() && *rest == "--") ++rest;
  std::vector<std::string> command(rest, flags.rest.end());
  command.insert(command.end(), flags.after_separator.begin(), flags.after_separator.end());
  return command;
}

AgentOptions resolve_agent_options(const AgentFlags& flags, const EnvMap& env, const JobEnvironment& job,
                                   const MachineInfo& machine, AgentFace face) {
  AgentOptions o = flags.set;
  const std::string& nnodes = flags.nnodes;
  const std::string& rdzv_backend = flags.rdzv_backend;
  const std::string& logs_specs = flags.logs_specs;
  std::string endpoint = flags.endpoint;
  const char* name = face == AgentFace::torchrun ? "torchrun" : "hpclaunch agent";
  o.command.args = worker_command_of(flags, face);
  if (o.command.args.empty())
    throw Error(name, "no command to run",
                face == AgentFace::torchrun ? "write `torchrun [FLAGS] SCRIPT ARG...`" : "write `hpclaunch agent [FLAGS] -- CMD ARG...`");
  o.command.always_python = face == AgentFace::torchrun;
  if (o.command.module && o.command.no_python) throw Error("--module", "cannot be used with --no-python");
  o.command.python = env_or(env, "HPCLAUNCH_PYTHON", "python3");

  if (rdzv_backend == "etcd" || rdzv_backend == "etcd-v2")
    throw Error("--rdzv-backend", "'" + rdzv_backend + "' needs an etcd server; the agent serves its own store",
                "use --rdzv-backend c10d (or drop the flag) with --rdzv-endpoint HOST:PORT of node 0");
  if (rdzv_backend != "c10d" && rdzv_backend != "static")
    throw Error("--rdzv-backend", "'" + rdzv_backend + "' is not supported", "use --rdzv-backend c10d or static");
  if (!flags.numa_binding.empty()) o.numa_binding = parse_numa_binding(flags.numa_binding);
  // torchrun: --shutdown-timeout, else TORCH_ELASTIC_SHUTDOWN_TIMEOUT, else 30 s.
  if (auto grace = flags.shutdown_timeout.empty() ? env_or(env, "TORCH_ELASTIC_SHUTDOWN_TIMEOUT") : flags.shutdown_timeout;
      !grace.empty()) {
    const char* what = flags.shutdown_timeout.empty() ? "TORCH_ELASTIC_SHUTDOWN_TIMEOUT" : "--grace/--shutdown-timeout";
    auto seconds = parse_seconds(grace);
    if (!seconds) throw Error(what, "'" + grace + "' is not a number of seconds", "e.g. 30");
    o.grace_s = *seconds;
  }
  o.dup_stdout_filters = split_escaped(flags.dup_stdout_filters, ',');
  o.dup_stderr_filters = split_escaped(flags.dup_stderr_filters, ',');
  if (!logs_specs.empty() && logs_specs != "default" && logs_specs != "DefaultLogsSpecs")
    throw Error("--logs-specs", "'" + logs_specs + "' is a Python plugin; only the default is known here",
                "drop it; --log-dir, --redirects and --tee choose where the output goes");
  if (!flags.event_log_handler.empty() && flags.event_log_handler != "null")
    throw Error("--event-log-handler",
                "'" + flags.event_log_handler +
                    "' names a handler in torch's Python events registry, which a C++ agent cannot call",
                "drop it; -v logs the agent's rendezvous and restarts to stderr");
  if (!o.log_line_prefix_given)
    if (auto t = env_get(env, "TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE")) {
      o.log_line_prefix_template = *t;
      o.log_line_prefix_given = true;
    }
  if (!flags.signals.empty()) {
    for (const auto& item : split(flags.signals, ',')) {
      int sig = 0;
      std::string err;
      if (!parse_catchable_signal(item, &sig, &err)) throw Error("--signals-to-handle", err, "e.g. SIGTERM,SIGINT,SIGUSR1");
      o.signals.push_back(sig);
    }
  }
  // torchrun's static rendezvous, and its legacy form: the endpoint is --master-addr:--master-port.
  if (endpoint.empty() && !flags.master_addr.empty())
    endpoint = flags.master_port.empty() ? flags.master_addr : flags.master_addr + ":" + flags.master_port;
  else if (endpoint.empty() && !flags.master_port.empty())
    throw Error("--master-port", "given without --master-addr", "give both, or --rdzv-endpoint HOST:PORT");
  if (!flags.rdzv_conf.empty()) parse_rdzv_conf(flags.rdzv_conf, &o);
  if (!nnodes.empty()) {
    parse_nnodes(nnodes, &o);
  } else if (!o.standalone && job.nnodes) {
    // The allocation's nodes, less the spares it holds.
    if (o.spares >= *job.nnodes)
      throw Error("--spares", fmt::format("{} leaves none of the allocation's {} nodes to run workers", o.spares,
                                          *job.nnodes),
                  fmt::format("use --spares {} or fewer, or ask for more nodes", *job.nnodes - 1));
    o.min_nodes = o.max_nodes = *job.nnodes - o.spares;
  }
  if (o.spares > 0 && o.standalone) throw Error("--spares", "a --standalone job has one node and no spares", "drop --spares");
  if (o.spares > 0 && rdzv_backend == "static")
    throw Error("--spares", "the static rendezvous has a fixed membership; a spare cannot join it",
                "use --rdzv-backend c10d (the default)");
  if (rdzv_backend == "static" && o.min_nodes != o.max_nodes)
    throw Error("--rdzv-backend", "static takes a fixed number of nodes, but --nnodes is " + nnodes,
                "use --nnodes N, or --rdzv-backend c10d for MIN:MAX");
  o.nproc = flags.nproc.empty() ? std::max(1, job.gpus.value_or(0)) : parse_nproc(flags.nproc, job.gpus, machine);
  check_stream_spec("--redirects", o.redirects);
  check_stream_spec("--tee", o.tee);
  if (!o.log_dir.empty() && o.redirects == "0" && o.tee == "0") o.tee = "3";
  if (!flags.local_ranks_filter.empty()) o.local_ranks_filter = parse_rank_list(flags.local_ranks_filter);
  o.host = job.node_name.empty() ? machine.hostname : job.node_name;
  o.verbose = o.verbose || env_or(env, "HPCLAUNCH_AGENT_VERBOSE") == "1";
  o.nvlink_domain = env_or(env, "HPCLAUNCH_NVLINK_DOMAIN");

  if (o.standalone) {
    if (o.max_nodes != 1) throw Error("--standalone", "runs one node, but --nnodes asks for " + nnodes);
    if (!endpoint.empty()) throw Error("--standalone", "chooses its own endpoint; drop --rdzv-endpoint");
    o.rdzv_host = "127.0.0.1";
    o.rdzv_port = 0;
    o.node_rank = 0;
  } else {
    if (!endpoint.empty()) parse_endpoint(endpoint, &o);
    if (o.rdzv_host.empty()) o.rdzv_host = job.master_addr;
    if (o.rdzv_port == 0) o.rdzv_port = job.rendezvous_port;
    const int ranks = o.max_nodes + o.spares;  // the node ranks of the job, its spares' included
    if (o.rdzv_host.empty() && ranks == 1) o.rdzv_host = "127.0.0.1";
    if (o.rdzv_host.empty())
      throw Error("--rdzv-endpoint", "not given, and the job's environment names no MASTER_ADDR",
                  "give --rdzv-endpoint HOST:PORT (HOST: the node-rank-0 node)");
    if (o.rdzv_port == 0 && ranks > 1)
      throw Error("--rdzv-endpoint", "has no port, and the job's environment names none",
                  "give --rdzv-endpoint HOST:PORT or export HPCLAUNCH_MASTER_PORT");
    if (!flags.node_rank.empty()) o.node_rank = parse_count("--node-rank", flags.node_rank, 0);
    else if (job.node_rank) o.node_rank = *job.node_rank;
    else if (ranks > 1 && rdzv_backend == "static")
      throw Error("--node-rank", "not given, and this is not inside a Slurm or hpclaunch job",
                  "give --node-rank R (0 on the node that serves the rendezvous), as the static rendezvous needs");
    else if (ranks > 1)
      o.node_rank = -1;  // torchrun's c10d: the agent that serves the endpoint is node 0, the rendezvous numbers the rest
    if (o.node_rank >= ranks)
      throw Error("--node-rank", o.spares ? fmt::format("{} is not below --nnodes {} + --spares {}", o.node_rank,
                                                        o.max_nodes, o.spares)
                                          : fmt::format("{} is not below --nnodes {}", o.node_rank, o.max_nodes));
  }
  if (!flags.rdzv_id.empty()) o.rdzv_id = flags.rdzv_id;
  else if (!job.job_id.empty()) o.rdzv_id = job.job_id;

  o.secret = env_or(env, "HPCLAUNCH_RDZV_SECRET");
  // As torchrun, whose store authenticates no one, the torchrun face runs a seed's script unchanged.
  if (o.secret.empty() && face == AgentFace::torchrun)  // keeps jobs apart, authenticates no one
    o.secret = fmt::format("torchrun-face:{}@{}:{}", o.rdzv_id, o.rdzv_host, o.rdzv_port);
  if (o.secret.empty() && o.max_nodes + o.spares > 1)
    throw Error("HPCLAUNCH_RDZV_SECRET", "is not set; the agents of a multi-node job trust only peers that know it",
                "export HPCLAUNCH_RDZV_SECRET=$(openssl rand -hex 16) before srun (rendered scripts do)");
  return o;
}

}  // namespace hpclaunch
