#include "survey/cluster_info.h"

namespace hpclaunch {

ClusterInfo survey_cluster(Scheduler scheduler, const std::string& user, const CommandRunner& run) {
  return backend_for(scheduler).survey(user, run);
}

}  // namespace hpclaunch
