// `hpclaunch exclude [NODE...] [--from-preflight FILE] [--from-failure FILE] [--requeue]`: run by a job's script
// when its preflight failed (`submit --preflight`) or its agents lost a node (`--requeue`): records the bad
// nodes in JOBDIR/excluded-nodes.json (`hpclaunch status` shows them) and, with --requeue, puts the job back in
// the queue so that its next run leaves them out.
#include <fmt/core.h>

#include <csignal>

#include "agent/failure.h"
#include "cli/cli_util.h"
#include "dialect/in_job.h"
#include "record/job_record.h"
#include "runtime/ranks.h"
#include "scheduler/backend.h"
#include "util/error.h"
#include "util/file.h"
#include "util/command.h"
#include "util/strings.h"

namespace hpclaunch {

int cmd_exclude(const Args& args) {
  CLI::App app("Record nodes a job must leave out (its preflight's bad nodes) and, with --requeue, requeue the job "
               "without them. Run inside the job, by the script `submit --preflight` writes.",
               "exclude");
  std::vector<std::string> named;
  std::string preflight, failure_file, reason = "named by hand", job_dir;
  bool requeue = false;
  app.add_option("NODE", named, "a node to leave out (repeatable)");
  app.add_option("--from-preflight", preflight, "the bad nodes of this preflight report (JOBDIR/preflight.json)");
  app.add_option("--from-failure", failure_file,
                 "the node a failed run blames (JOBDIR/failure.json, the agents' root cause), when it is the node's fault");
  app.add_option("--reason", reason, "why the NODEs given by name are left out");
  app.add_option("--job-dir", job_dir, "the job directory (default: $HPCLAUNCH_JOB_DIR)");
  app.add_flag("--requeue", requeue, "requeue this job (Slurm) so that its next run leaves out every recorded node");
  if (!parse_or_throw(app, args)) return 0;

  Env env = capture_environment();
  if (job_dir.empty()) job_dir = env_get(env, "HPCLAUNCH_JOB_DIR").value_or("");
  if (job_dir.empty()) throw Error("--job-dir", "no job directory", "run it inside a job hpclaunch submitted, or give --job-dir");
  const SchedulerDialect* dialect = job_dialect(env);
  const InJobFace* face = dialect ? &dialect->in_job() : nullptr;
  int run = face ? face->restart_count(env) : 0;
  if (requeue && dialect && !dialect->capabilities().exclude_nodes)
    throw Error("--requeue", std::string("a ") + face->name() + " job cannot be requeued without named nodes",
                "drop --requeue: the nodes are recorded; resubmit the job to leave them out");

  std::vector<ExcludedNode> found;
  if (!preflight.empty()) {
    auto text = read_file(preflight);
    if (!text) throw failure(preflight, "cannot be read", "the preflight writes it; check that it ran");
    found = bad_nodes_of_preflight(*text, preflight, run);
  }
  if (!failure_file.empty()) {
    auto text = read_file(failure_file);
    std::optional<Failure> record = text ? parse_failure_record(*text) : std::nullopt;
    if (!record) throw failure(failure_file, "is not the agents' failure record", "read the job's output");
    const Failure& f = *record;
    std::string node = faulty_node(f);
    if (!node.empty()) found.push_back({node, "the run died: " + describe(f), run});
  }
  for (const auto& n : named) found.push_back({n, reason, run});
  if (found.empty()) {
    std::string from = !preflight.empty() ? preflight : !failure_file.empty() ? failure_file : "hpclaunch exclude";
    throw failure(from, "names no node to leave out", "the failure was not a node's: read the job's output");
  }

  ExcludedNodesFile file = read_excluded_nodes(job_dir);
  file.nodes = merge_excluded(file.nodes, found);
  write_excluded_nodes(job_dir, file);
  for (const auto& n : found) fmt::print(stderr, "hpclaunch: leaving out {} ({}, run {})\n", n.node, n.reason, n.run);
  if (!requeue) return 0;

  std::string id = job_id(env);
  if (id.empty()) throw Error("--requeue", "no job id in the environment", "run it inside the job");
  // The requeue ends this run with SIGTERM to every process of the job; the exclusion still has to be made.
  std::signal(SIGTERM, SIG_IGN);
  std::vector<std::string> nodes;
  for (const auto& n : file.nodes) nodes.push_back(n.node);
  backend_for(read_job_record(job_dir).scheduler).requeue_excluding(id, nodes, run_capture);
  fmt::print(stderr, "hpclaunch: requeued job {}; its next run leaves out {}\n", id, join(nodes, ","));
  return 0;
}

}  // namespace hpclaunch
