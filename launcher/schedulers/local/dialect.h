// The local site's dialect: no directives, no array options (the local runner reads an array's count and limit
// from plan.json and sets HPCLAUNCH_ARRAY_TASK itself), tasks named ID_I as Slurm's.
#pragma once
#include "dialect/dialect.h"
#include "schedulers/slurm/dialect.h"

namespace hpclaunch {

class LocalDialect final : public SchedulerDialect {
 public:
  Scheduler kind() const override { return Scheduler::local; }
  // The runner runs an array's tasks in turn, runs the script again when it exits 99 (backend_job.h), and passes
  // `cancel --signal` on (it keeps no time limit to warn before); there is no cluster to survey or check against.
  SchedulerCapabilities capabilities() const override {
    SchedulerCapabilities c;
    c.arrays = c.requeue = c.warning_signal = true;
    return c;
  }
  std::vector<LaunchMode> launchers() const override {  // local-srun plays srun
    return {LaunchMode::agent, LaunchMode::srun, LaunchMode::mpirun};
  }
  std::vector<GpuStyle> gpu_styles() const override { return {}; }  // no directives: the machine's GPUs are the job's
  const InJobFace& in_job() const override;  // in_job.cc
  bool runs_here() const override { return true; }
  // The local runner runs inside anything: a Slurm allocation, a PBS job (the test cluster's nodes).
  std::vector<std::string> nests_in() const override { return {"*"}; }
  std::vector<std::string> directives(const BatchRequest&, const ScriptPlace&) const override { return {}; }
  std::vector<std::string> array_options(int, int) const override { return {}; }
  std::vector<std::string> dependency_options(const std::vector<Dependency>&) const override { return {}; }
  const char* array_index_variable() const override { return nullptr; }
  std::string task_job_id(const std::string& array_id, int task) const override { return slurm_task_job_id(array_id, task); }
  std::optional<std::pair<std::vector<std::string>, int>> split_task_ref(const std::string& ref) const override {
    return split_slurm_task_ref(ref);
  }
};

}  // namespace hpclaunch
