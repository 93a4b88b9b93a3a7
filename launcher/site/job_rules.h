// The rules a site profile picks for inside the job, which the runtime (runtime/gpu_bind.h, rendezvous.h) carries
// out: which GPU a task gets and where MASTER_ADDR comes from. Named once here, below the dialects and the runtime.
#pragma once
#include "util/enum_names.h"

namespace hpclaunch {

enum class GpuBind { none, local_rank };
// Its names, as profiles (launch.gpu_bind), plan.json and the script's HPCLAUNCH_GPU_BIND spell them.
inline const EnumNames<GpuBind> k_gpu_bind_names = {{"none", GpuBind::none}, {"local-rank", GpuBind::local_rank}};
inline const char* to_string(GpuBind b) { return name_of(k_gpu_bind_names, b); }

enum class MasterAddrRule { first_node, batch_host, fixed };
// Its names, as profiles (rendezvous.master_addr) and the script's HPCLAUNCH_MASTER_ADDR_RULE spell them.
inline const EnumNames<MasterAddrRule> k_master_addr_rule_names = {
    {"first-node", MasterAddrRule::first_node}, {"batch-host", MasterAddrRule::batch_host},
    {"fixed", MasterAddrRule::fixed}};
inline const char* to_string(MasterAddrRule r) { return name_of(k_master_addr_rule_names, r); }

}  // namespace hpclaunch
