// The --json documents (cli/json_output.h, docs/json.md): schema names, the record types inside them, and a
// profile's YAML read back with its scalars typed.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli/json_output.h"
#include "plan/plan.h"
#include "site/registry.h"
#include "submit/submit_job.h"
#include "test_util.h"

namespace json_output_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

namespace {

using test::sites;

LaunchPlan perlmutter_plan() {
  JobRequest r;
  r.site = "perlmutter";
  r.nodes = 2;
  r.account = "m1234_g";
  r.command = {"python", "train.py"};
  return make_plan(r, sites().get("perlmutter"));
}

}  // namespace

TEST_SUITE_BEGIN("json_output");

TEST_CASE("submit and render carry plan.json's record and job.json's fields under their schema") {
  LaunchPlan plan = perlmutter_plan();
  JobRecord job;
  job.job_id = "1234";
  job.scheduler = Scheduler::slurm;
  job.site = "perlmutter";
  job.dir = "/scratch/hpclaunch-jobs/train-1";
  job.nodes = 2;
  job.after = {"afterok:12"};
  nlohmann::json s = submit_json(job, plan, std::nullopt);
  CHECK(s["schema"] == "hpclaunch.submit/1");
  CHECK(s["job"]["job_id"] == "1234");
  CHECK(s["job"]["scheduler"] == "slurm");
  CHECK(s["job"]["job_dir"] == "/scratch/hpclaunch-jobs/train-1");
  CHECK(s["job"]["after"] == nlohmann::json::array({"afterok:12"}));
  CHECK(s["script"] == "/scratch/hpclaunch-jobs/train-1/job.sh");
  CHECK(s["plan"] == nlohmann::json(plan_file(plan)));
  CHECK(s["plan"]["world_size"] == 8);
  CHECK(s["rendezvous_port"] == 20000 + 1234);  // runtime/rendezvous.h's formula
  CHECK(s["exit_code"].is_null());
  CHECK(submit_json(job, plan, 3)["exit_code"] == 3);
  nlohmann::json r = render_json(plan, "/d", "#!/bin/bash\n");
  CHECK(r["schema"] == "hpclaunch.render/1");
  CHECK(r["script_text"] == "#!/bin/bash\n");
  CHECK(r["plan"]["launcher"] == "srun");
}

TEST_CASE("logs, cancel and --version under their schema") {
  JobRecord job;
  job.job_id = "1234";
  job.dir = "/d";
  job.scheduler = Scheduler::slurm;
  nlohmann::json l = logs_json({job, "/d/slurm-1234.out", std::string("0: hi\n"), {}}, 0);
  CHECK(l["schema"] == "hpclaunch.logs/1");
  CHECK(l["file"] == "/d/slurm-1234.out");
  CHECK(l["text"] == "0: hi\n");
  CHECK(l["rank"] == 0);
  CHECK(l["tasks"].empty());
  JobRecord task = job;
  task.job_id = "1234_0";
  nlohmann::json a = logs_json({job, "", std::nullopt, {{task, "", std::nullopt, {}}}}, std::nullopt);
  CHECK(a["file"].is_null());
  CHECK(a["rank"].is_null());
  CHECK(a["tasks"][0]["task"] == 0);
  CHECK(a["tasks"][0]["job_id"] == "1234_0");
  CHECK(a["tasks"][0]["text"].is_null());  // no output yet
  nlohmann::json c = cancel_json(job, "job");
  CHECK(c["schema"] == "hpclaunch.cancel/1");
  CHECK(c["scheduler"] == "slurm");
  CHECK(c["what"] == "job");
  nlohmann::json v = version_json("0.1.0", "abc123");
  CHECK(v["schema"] == "hpclaunch.version/1");
  CHECK(v["version"] == "0.1.0");
  CHECK(v["commit"] == "abc123");
}

TEST_CASE("a state: phase, description, exit code or null, finished") {
  JobState s;
  s.phase = Phase::failed;
  s.raw = "FAILED";
  s.reason = "NonZeroExitCode";
  s.exit_code = 3;
  nlohmann::json j = state_json(s);
  CHECK(j["phase"] == "failed");
  CHECK(j["description"] == describe(s));
  CHECK(j["exit_code"] == 3);
  CHECK(j["finished"] == true);
  JobState pending;
  CHECK(state_json(pending)["exit_code"].is_null());
  CHECK(state_json(pending)["finished"] == false);
  JobRecord job;
  job.job_id = "7";
  CHECK(wait_json(job, s, 1)["schema"] == "hpclaunch.wait/1");
  CHECK(wait_json(job, s, 1)["exit_code"] == 1);
}

TEST_CASE("sites and one site: numbers as numbers, words as strings") {
  nlohmann::json all = sites_json(sites());
  CHECK(all["schema"] == "hpclaunch.sites/1");
  CHECK(all["sites"].size() == sites().all().size());
  nlohmann::json one = site_json(sites().get("perlmutter"));
  CHECK(one["schema"] == "hpclaunch.site/1");
  const nlohmann::json& p = one["profile"];
  CHECK(p["name"] == "perlmutter");
  CHECK(p["node"]["gpus"] == 4);  // a number, not "4"
  CHECK(p["node"]["gpus"].is_number_integer());
  CHECK(p["launch"]["allowed"] == nlohmann::json::array({"srun", "agent"}));
  CHECK(p["account"]["required"] == false);
  for (const auto& q : p["queues"]) CHECK(q["name"].is_string());
}

TEST_SUITE_END();

}  // namespace json_output_test
