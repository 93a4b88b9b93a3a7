// MASTER_ADDR and MASTER_PORT for torch's env:// rendezvous (and the agents' store): the site profile's rule
// (docs/CONTRACTS.md: HPCLAUNCH_MASTER_ADDR_*, HPCLAUNCH_MASTER_PORT), flags, and what the user already set.
//
// Precedence, highest first: an existing MASTER_ADDR / MASTER_PORT, then the --master-addr/--master-port flag,
// then the profile's rule. MASTER_PORT with no profile default is derived from the job id:
//
//   derive_master_port(id) = 20000 + (n mod 10000)
//     n = the id's leading decimal digits (Slurm "4242", "4242_7"; PBS "4242.server") if it has any,
//         else FNV-1a (32 bit) of the whole id (hpclaunch local ids, anything else).
//
// So ports stay in [20000, 29999] (unprivileged, below Linux's ephemeral range 32768-60999) and jobs whose
// ids differ by less than 10000 never share a port on a shared node.
//
// A task of an array job (HPCLAUNCH_ARRAY_TASK=i, exported by the script) may share a node with its siblings: its
// port is the array's plus i, so the tasks of one array (at most 10000, plan/sweep.h) never share one:
//   derived:  20000 + ((n + i) mod 10000), n from the array's id as the job's face says it (Slurm's
//             SLURM_ARRAY_JOB_ID, PBS's PBS_ARRAY_ID), else the job id (the local runner's is the array's already)
//   profile:  HPCLAUNCH_MASTER_PORT + i
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/environment.h"
#include "runtime/ranks.h"
#include "site/job_rules.h"

namespace hpclaunch {

inline constexpr int k_master_port_base = 20000;
inline constexpr int k_master_port_span = 10000;
inline constexpr int k_master_port_no_job = 29500;  // torch's default, for a plain shell with no job id

struct MasterAddrPolicy {
  MasterAddrRule rule = MasterAddrRule::first_node;
  std::string suffix;   // appended to the host name ("i" on JSC systems)
  bool resolve = false; // turn the name into an IPv4 address
  std::string fixed;    // the address when rule == fixed
};

// The profile's rule from HPCLAUNCH_MASTER_ADDR_RULE/_SUFFIX/_RESOLVE/_FIXED (defaults: first-node, no
// suffix, no resolve; with no rule in a job whose face names one address (local-srun's 127.0.0.1): fixed, that). Throws hpclaunch::Error naming the variable on a bad value.
MasterAddrPolicy master_addr_policy_from_env(const Env& env);
MasterAddrRule parse_master_addr_rule(std::string_view s, std::string_view where);

// Host name -> IPv4 address, nullopt if it does not resolve. An effect: resolve_ipv4 (system.h) in
// production, a table in tests.
using Resolver = std::function<std::optional<std::string>(const std::string& host)>;

// The address by the rule alone: first-node = the first of `step_nodes` (rank 0's node under block
// distribution), batch-host = the first of `job_nodes` (where Slurm and PBS run the batch script), fixed =
// policy.fixed; then the suffix, then resolution. Throws if the list it needs is empty, if fixed has no
// address, or if the name does not resolve (naming it).
std::string master_addr_by_rule(const MasterAddrPolicy& policy, const std::vector<std::string>& step_nodes,
                                const std::vector<std::string>& job_nodes, const Resolver& resolve);

// The full choice: existing MASTER_ADDR, else `flag`, else master_addr_by_rule.
std::string choose_master_addr(const Env& env, const std::optional<std::string>& flag,
                               const MasterAddrPolicy& policy, const std::vector<std::string>& step_nodes,
                               const std::vector<std::string>& job_nodes, const Resolver& resolve);

// The same choice from the environment alone, the one to call: existing MASTER_ADDR, else `flag`, else the
// profile's rule (master_addr_policy_from_env) over step_nodes/job_nodes, which are read only then
// (PBS_NODEFILE exists only on a PBS job's first host).
std::string master_addr_from_env(const Env& env, const std::optional<std::string>& flag, const FileReader& read_file,
                                 const Resolver& resolve, const CommandReader& run = {});

// The formula above. An empty job id gives k_master_port_no_job.
int derive_master_port(std::string_view job_id);
// Existing MASTER_PORT, else `flag`, else HPCLAUNCH_MASTER_PORT, else derive_master_port(job_id); an array task's
// as above. Every value must be a port number in [1, 65535] (Error naming the variable or flag otherwise).
int choose_master_port(const Env& env, std::optional<int> flag, std::string_view job_id);

// Where the agent draws its workers' MASTER_PORT from (one per rendezvous round): [30000, the kernel's first
// ephemeral port), above the ports derived from job ids and below every port an outgoing connection can be given.
// torchrun binds port 0 and hands that ephemeral port on; until rank 0 binds it, seconds later after its imports,
// any connection this node opens may take it ("Address already in use"). Drawn here, only a listener that chose the
// same port can. `ip_local_port_range` is /proc/sys/net/ipv4/ip_local_port_range's text ("32768\t60999"); the band
// is empty (low == high) when that text is unreadable or leaves fewer than 100 ports, and the agent then binds 0.
struct PortBand {
  int low = 0;
  int high = 0;  // one past the last
};
inline constexpr int k_worker_port_low = k_master_port_base + k_master_port_span;  // 30000
PortBand worker_port_band(std::string_view ip_local_port_range);

}  // namespace hpclaunch
