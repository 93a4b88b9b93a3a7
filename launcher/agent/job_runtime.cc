// The runtime's rules for the agent (RuntimeRules, job_environment.h): MASTER_ADDR by the site's rule and the
// rendezvous port by the runtime's formula (launcher/runtime/rendezvous.h). The one place they are plugged in.
#include "agent/job_environment.h"
#include "runtime/ranks.h"
#include "runtime/rendezvous.h"
#include "runtime/system.h"

namespace hpclaunch {

RuntimeRules runtime_rules() {
  RuntimeRules r;
  r.master_addr = [](const Env& env) {
    // Reads node lists only when the rule needs them: PBS_NODEFILE exists on the first host alone.
    return master_addr_from_env(env, std::nullopt, read_text_file, resolve_ipv4, command_output);
  };
  r.rendezvous_port = [](const Env& env, const std::string& job_id) {
    return choose_master_port(env, std::nullopt, job_id);
  };
  return r;
}

}  // namespace hpclaunch
