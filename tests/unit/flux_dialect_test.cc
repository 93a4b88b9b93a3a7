// Flux's dialect (launcher/schedulers/flux/dialect.cc): the `# flux:` directives of a batch job, dependencies, no
// arrays, f58 ids, and what flux batch and flux jobs answer. The answers were recorded from the stand-in `flux`
// (tests/schedulers/flux/, which follows flux-core's man pages: flux-core itself cannot be installed here).
#include <doctest/doctest.h>

#include <algorithm>

#include "plan/plan.h"
#include "render/render.h"
#include "schedulers/flux/dialect.h"
#include "site/registry.h"
#include "test_util.h"

namespace flux_dialect_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;
using test::sites;

namespace {

const RenderContext k_ctx = {"/opt/hpclaunch/bin/hpclaunch", "/p/lustre5/user/project", "/p/lustre5/user/project/jobs/train"};

LaunchPlan plan_for(const std::string& site, const std::string& launcher, int nodes = 2) {
  JobRequest r;
  r.site = site;
  r.nodes = nodes;
  r.launcher = launcher;
  r.command = {"python", "train.py"};
  return make_plan(r, sites().get(site));
}

std::vector<std::string> directives_of(const LaunchPlan& p, bool array = false) {
  return flux_dialect().directives(p, {k_ctx.workdir, k_ctx.job_dir, array, {}});
}

bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

}  // namespace

TEST_SUITE_BEGIN("flux_dialect");

TEST_CASE("Flux is a scheduler folder: its name, its launcher `flux`, its GPU style, nesting in Slurm") {
  REQUIRE(scheduler_named("flux") == Scheduler::flux);
  CHECK(&dialect_for(Scheduler::flux) == &flux_dialect());
  CHECK(launch_mode_named("flux") == LaunchMode::flux);
  CHECK(launch_tasks(LaunchMode::flux) == LaunchTasks::per_worker);
  CHECK(gpu_style_named("gpus-per-slot") == GpuStyle::gpus_per_slot);
  CHECK(flux_dialect().offers(LaunchMode::flux));
  CHECK(flux_dialect().offers(LaunchMode::agent));
  CHECK_FALSE(flux_dialect().offers(LaunchMode::srun));
  CHECK(flux_dialect().writes(GpuStyle::gpus_per_slot));
  CHECK_FALSE(flux_dialect().writes(GpuStyle::gres));
  CHECK(flux_dialect().nests_in() == std::vector<std::string>{"slurm"});
  CHECK(flux_dialect().presence_command() == std::vector<std::string>{"flux", "getattr", "rank"});
  // Innermost first: inside a Slurm allocation that runs Flux, Flux's face is asked before Slurm's.
  auto order = all_dialects();
  auto at = [&](Scheduler s) { return std::find(order.begin(), order.end(), &dialect_for(s)) - order.begin(); };
  CHECK(at(Scheduler::flux) < at(Scheduler::slurm));
  // Flux brings its launcher into a Slurm allocation (srun flux start), and no other scheduler's.
  CHECK(dialect_for(Scheduler::slurm).guest_for(LaunchMode::flux) == &flux_dialect());
  CHECK(launcher_refusal(Scheduler::slurm, LaunchMode::flux).empty());
  CHECK(launcher_refusal(Scheduler::pbs, LaunchMode::flux) == "flux needs flux or slurm");
  CHECK(dialect_for(Scheduler::pbs).guest_for(LaunchMode::flux) == nullptr);
  CHECK(gpu_style_refusal(Scheduler::flux, GpuStyle::gres).find("flux writes no gres request") != std::string::npos);
}

TEST_CASE("a batch job of El Capitan asks one slot per node: its cores and GPUs, the queue, the time, the bank") {
  LaunchPlan p = plan_for("el-capitan", "flux");
  p.account = "guests";
  std::vector<std::string> d = directives_of(p);
  CHECK(d.at(0) == "-N 2");
  CHECK(d.at(1) == "-n 2");
  CHECK(d.at(2) == "-c 84");  // cores, not hardware threads
  CHECK(d.at(3) == "-g 4");
  CHECK(has(d, "--queue=pbatch"));
  CHECK(has(d, "--setattr=system.bank=guests"));
  CHECK(has(d, "-t 60m"));
  CHECK(has(d, "--job-name=" + p.job_name));
  CHECK(has(d, "--cwd=" + k_ctx.workdir));
  CHECK(has(d, "--output=" + k_ctx.job_dir + "/output.log"));
  CHECK(has(d, "--exclusive"));  // the profile's own
  // A time of whole minutes in minutes, any other in seconds (RFC 23's FSD).
  p.time_s = 90;
  CHECK(has(directives_of(p), "-t 90s"));
  // No account: no bank (Flux charges the user's default bank); a CPU job asks no GPU.
  LaunchPlan cpu = plan_for("el-capitan", "agent");
  cpu.gpus_per_node = 0;
  std::vector<std::string> c = directives_of(cpu);
  CHECK(std::none_of(c.begin(), c.end(), [](const std::string& x) { return x.starts_with("--setattr=system.bank"); }));
  CHECK_FALSE(has(c, "-g 0"));
}

TEST_CASE("no job arrays: none asked, and an array on a profile that allows them is refused in one line") {
  CHECK(flux_dialect().array_options(4, 2).empty());
  CHECK(flux_dialect().array_index_variable() == nullptr);
  CHECK_FALSE(sites().get("el-capitan").arrays);  // so --array submits a job per task
  LaunchPlan p = plan_for("el-capitan", "flux");
  CHECK(test::error_of_call([&] { directives_of(p, true); }) ==
        "--array: flux batch has no job arrays, and el-capitan's profile does not say `arrays: false`; add "
        "`arrays: false` to el-capitan's profile, so that submit sends each task as a job of its own");
  // A task of a job per task is named as Slurm's: JOB_I.
  CHECK(flux_dialect().task_job_id("fA1b", 3) == "fA1b_3");
  auto ref = flux_dialect().split_task_ref("fA1b_3");
  REQUIRE(ref);
  CHECK(ref->first == std::vector<std::string>{"fA1b"});
  CHECK(ref->second == 3);
}

TEST_CASE("dependencies: one --dependency=afterok:ID per job, as flux batch takes them") {
  std::vector<Dependency> after = {{"f2UzHM", DependencyKind::ok}, {"fJ3rjy1", DependencyKind::any},
                                   {"f3", DependencyKind::notok}};
  CHECK(flux_dialect().dependency_options(after) ==
        std::vector<std::string>{"--dependency=afterok:f2UzHM", "--dependency=afterany:fJ3rjy1", "--dependency=afternotok:f3"});
  CHECK(flux_dialect().dependency_options({}).empty());
}

TEST_CASE("f58 ids: kept with the ASCII prefix; flux batch's answer read, a refusal quoted") {
  CHECK(flux_plain_id("\xc6\x92" "2UzHM") == "f2UzHM");
  CHECK(flux_plain_id("f2UzHM") == "f2UzHM");
  CHECK_FALSE(flux_plain_id("2UzHM"));
  CHECK_FALSE(flux_plain_id("f0OIl"));  // no 0, O, I or l in base58
  CHECK_FALSE(flux_plain_id("fjpXCZedGfVQ1"));  // at most 11 digits: 2^64 - 1 is fjpXCZedGfVQ
  CHECK(parse_flux_batch_answer({0, "\xc6\x92" "3FD5vXZ\n", ""}) == "f3FD5vXZ");
  CHECK(parse_flux_batch_answer({0, "fXErMNw\n", ""}) == "fXErMNw");
  CHECK(test::error_of_call([] {
          parse_flux_batch_answer({2, "", "usage: flux batch [OPTIONS...] [SCRIPT] [ARGS...]\nflux batch: error: "
                                          "unrecognized arguments: --bogus\n"});
        }) == "flux batch: refused the job (exit 2): usage: flux batch [OPTIONS...] [SCRIPT] [ARGS...] ...; fix what "
              "the scheduler names; nothing was submitted");
  CHECK(test::error_of_call([] { parse_flux_batch_answer({127, "", "flux: No such file or directory"}); })
            .find("flux batch: not found on this machine") == 0);
  CHECK(test::error_of_call([] { parse_flux_batch_answer({0, "submitted\n", ""}); }).find("holds no job id") !=
        std::string::npos);
}

TEST_CASE("flux jobs: one query for many ids, each job's state, exit code and reason") {
  CHECK(flux_jobs_command({"f2UzHM", "f67WXMy"}) ==
        std::vector<std::string>{"flux", "jobs", "-a", "-n", "-o", "{id.f58plain}|{status}|{returncode}|{inactive_reason}",
                                 "f2UzHM", "f67WXMy"});
  // Recorded from the stand-in: completed, exit 3, running, cancelled, waiting for a dependency, a dependency
  // that can no longer be met.
  const char* out =
      "f2UzHM|COMPLETED|0|Exit 0\n"
      "f67WXMy|FAILED|3|Exit 3\n"
      "fCW9RpB|RUN||\n"
      "fJJgcnT|CANCELED|143|Canceled\n"
      "fQTydhZ|DEPEND||\n"
      "fXErMNw|FAILED|1|Exception: type=dependency note=dependency: afterok: job f67WXMy did not satisfy the dependency\n"
      "fTo1|TIMEOUT|-9|Timeout\n"
      "fSc1|SCHED||\n"
      "fCm1|CLEANUP||\n";
  auto jobs = parse_flux_jobs(out);
  REQUIRE(jobs.size() == 9);
  CHECK(describe(jobs["f2UzHM"]) == "COMPLETED");
  CHECK(jobs["f2UzHM"].exit_code == 0);
  CHECK(jobs["f67WXMy"].phase == Phase::failed);
  CHECK(jobs["f67WXMy"].exit_code == 3);
  CHECK(jobs["f67WXMy"].reason.empty());  // "Exit 3" says no more than the code
  CHECK(jobs["fCW9RpB"].phase == Phase::running);
  CHECK(jobs["fCm1"].phase == Phase::running);
  CHECK(jobs["fJJgcnT"].phase == Phase::cancelled);
  CHECK(jobs["fQTydhZ"].phase == Phase::pending);
  CHECK(jobs["fQTydhZ"].reason == "Dependency");
  CHECK(jobs["fSc1"].phase == Phase::pending);
  CHECK(jobs["fXErMNw"].phase == Phase::failed);
  CHECK(jobs["fXErMNw"].reason.find("did not satisfy the dependency") != std::string::npos);
  CHECK(jobs["fTo1"].phase == Phase::timeout);
  CHECK(parse_flux_jobs("garbage\n\nfX|WHAT||\n").empty());
  // Unknown ids, an inactive or ended job: the scheduler no longer knows it; anything else is a failure.
  CHECK(flux_unknown_job({1, "", "JobID fBogus2 unknown\n"}));
  CHECK(flux_unknown_job({1, "", "flux-cancel: ERROR: f2UzHM: job is inactive\n"}));
  CHECK(flux_unknown_job({1, "", "flux-job: kill f2UzHM: job is not running\n"}));
  CHECK_FALSE(flux_unknown_job({1, "", "flux-jobs: ERROR: Unknown format field: result\n"}));
  CHECK_FALSE(flux_unknown_job({1, "", "flux-jobs: ERROR: Unable to connect to Flux\n"}));
  CHECK_FALSE(flux_unknown_job({127, "", "not found"}));
}

TEST_CASE("the batch script: # flux: lines, one flux run of agents or of workers, MASTER_ADDR asked once") {
  std::string agent = render_script(plan_for("el-capitan", "agent"), k_ctx);
  CHECK(agent.rfind("#!/bin/bash\n# flux: -N 2\n# flux: -n 2\n# flux: -c 84\n# flux: -g 4\n", 0) == 0);
  CHECK(agent.find("MASTER_ADDR=\"$(flux hostlist --nth=0 local)\" || exit 1\nexport MASTER_ADDR\n") != std::string::npos);
  // The sizes come from the dialect (template_values), not from the shell.
  CHECK(agent.find("flux run -N 2 -n 2 -c 84 -g 4 \\\n  \"$HPCLAUNCH\" agent --nnodes 2 "
                   "--nproc-per-node 4 -- python train.py\n") != std::string::npos);
  CHECK(agent.find("export HPCLAUNCH_RDZV_SECRET=") != std::string::npos);
  CHECK(agent.find("$((") == std::string::npos);
  std::string direct = render_script(plan_for("el-capitan", "flux"), k_ctx);
  CHECK(direct.find("flux run -N 2 -n 8 -c 21 -g 1 -l -o exit-on-error \\\n  \"$HPCLAUNCH\" exec -- "
                    "python train.py\n") != std::string::npos);
  // A job without GPUs asks flux run for none (its tasks then see none).
  LaunchPlan cpu = plan_for("el-capitan", "flux");
  cpu.gpus_per_node = 0;
  std::string cpu_script = render_script(cpu, k_ctx);
  CHECK(cpu_script.find("flux run -N 2 -n 8 -c 21 -l -o exit-on-error") != std::string::npos);
  CHECK(cpu_script.find(" -g ") == std::string::npos);
  CHECK(direct.find("HPCLAUNCH_RDZV_SECRET") == std::string::npos);
  CHECK(direct.find("srun") == std::string::npos);
  CHECK(direct.find("#SBATCH") == std::string::npos);
  // Spares need agents that outlive a lost one: one flux run ends them all.
  JobRequest r;
  r.site = "el-capitan";
  r.nodes = 3;
  r.launcher = "agent";
  r.spares = 1;
  r.command = {"python", "train.py"};
  CHECK(test::error_of_call([&] { make_plan(r, sites().get("el-capitan")); }).find("flux run, which ends every agent") !=
        std::string::npos);
}

TEST_CASE("Flux inside a Slurm allocation: srun flux start, flux run of the ranks in it, on a site that allows it") {
  SiteProfile site = sites().get("perlmutter");
  site.launchers.push_back(LaunchMode::flux);
  JobRequest r;
  r.site = "perlmutter";
  r.nodes = 2;
  r.launcher = "flux";
  r.account = "m1234_g";
  r.command = {"python", "train.py"};
  LaunchPlan p = make_plan(r, site);
  CHECK(p.ntasks == 8);  // flux run's tasks: one per worker
  std::string script = render_script(p, k_ctx);
  CHECK(script.find("#SBATCH --nodes=2\n") != std::string::npos);
  CHECK(script.find("\nsrun --nodes=2 --ntasks=2 --ntasks-per-node=1 --cpus-per-task=" + std::to_string(p.cpus_per_node) +
                    " flux start \\\n  flux run -N 2 -n 8 -c " + std::to_string(p.threads_per_worker) +
                    " -g 1 -l -o exit-on-error \"$HPCLAUNCH\" exec -- python train.py\n") != std::string::npos);
  CHECK(script.find("# Flux in this Slurm allocation: `srun flux start` runs one Flux broker") != std::string::npos);
  CHECK(script.find("srun --label") == std::string::npos);  // no other launch
  // Perlmutter's own profile does not allow it: refused with the launchers it does.
  r.launcher = "flux";
  CHECK(test::error_of_call([&] { make_plan(r, sites().get("perlmutter")); }).find("--launcher") == 0);
}

TEST_SUITE_END();

}  // namespace flux_dialect_test
