#include <doctest/doctest.h>

#include "plan/job_spec.h"
#include "util/error.h"

namespace job_spec_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

TEST_SUITE_BEGIN("job_spec");

TEST_CASE("a spec fills the request as the flags would") {
  JobRequest r;
  read_job_spec("s.yaml",
                "description: x\nsite: cc\nnodes: 3\ngpus_per_node: 2\ntime: '1:00:00'\nlauncher: srun\nrequeue: true\n"
                "max_requeues: 5\nsignal: USR2@60\nmodules: [a, b]\nenv: {K: 'v w'}\ncommand: [python, 'a b']\n",
                &r);
  CHECK(r.site == "cc");
  CHECK(r.nodes == 3);
  CHECK(r.gpus_per_node == 2);
  CHECK(r.time == "1:00:00");
  CHECK(r.launcher == "srun");
  CHECK(r.requeue == true);
  CHECK(r.max_requeues == 5);
  CHECK(r.signal == "USR2@60");
  CHECK(r.modules == std::vector<std::string>{"a", "b"});
  CHECK(r.env == std::vector<std::string>{"K=v w"});
  CHECK(r.command == std::vector<std::string>{"python", "a b"});
}

TEST_CASE("spec errors name file:line:column and the key") {
  JobRequest r;
  CHECK_THROWS_WITH(read_job_spec("s.yaml", "site: cc\ncomand: [x]\n", &r),
                    "s.yaml:2:1: unknown key 'comand' (did you mean 'command'?); remove it or use one of: description, "
                    "site, nodes, gpus_per_node, time, account, partition, qos, constraint, launcher, name, container, "
                    "modules, env, requeue, signal, max_requeues, hang_timeout, spares, segment, exclusive_topo, preflight, snapshot, snapshot_exclude, snapshot_max_size, array, sweep, sweep_zip, max_concurrent, command");
  CHECK_THROWS_WITH(read_job_spec("s.yaml", "nodes: many\n", &r),
                    "s.yaml:1:8: nodes: expected a whole number, got 'many'; write e.g. `nodes: 4`");
  CHECK_THROWS_WITH(read_job_spec("s.yaml", "command: []\n", &r), "s.yaml:1:10: command: is empty; list the program and its arguments");
  CHECK_THROWS_WITH(read_job_spec("s.yaml", "command: python x.py\n", &r),
                    "s.yaml:1:10: command: expected a list; write it as `command: [a, b]`");
  CHECK_THROWS_WITH(read_job_spec("s.yaml", "- a\n", &r), "s.yaml:1:1: a job spec must be a mapping; write `key: value` lines, e.g. `site: local`");
  CHECK_THROWS_WITH(read_job_spec("s.yaml", "env: {'A B': 1}\n", &r),
                    "s.yaml:1:7: env: 'A B' is not a variable name; use letters, digits and _ only, not starting with a digit");
}

TEST_SUITE_END();

}  // namespace job_spec_test
