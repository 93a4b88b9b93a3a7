// The training run: see trainer.h. The rooms: setup.cc, step.cc, reporter.cc, loop.cc (run.h holds their state).
#include "trainer.h"

#include "loop.h"
#include "reporter.h"
#include "run.h"
#include "signals.h"

namespace hpctrain {

int run_training(const TrainOptions& o, const DistEnv& env) {
  install_signal_handlers();  // main() did it already; here for callers that are not main()
  Run run{o, env};
  setup(run);
  trim_metrics_on_resume(run);
  Reporter report(run);
  report.run_start();
  const int code = run_loop(run, report);
  run.comm->shutdown();  // a run that throws leaves the process group to its destructor, as before
  return code;
}

}  // namespace hpctrain
