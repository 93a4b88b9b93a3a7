#include <doctest/doctest.h>

#include <algorithm>

#include "test_util.h"

#include <nlohmann/json.hpp>

#include "dialect/dialect.h"
#include "plan/plan.h"
#include "util/warning_signal.h"
#include "site/profile_yaml.h"
#include "site/registry.h"
#include "util/error.h"
#include "util/strings.h"
#include "submit/submit_job.h"

namespace plan_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

namespace {

using test::sites;

JobRequest request(const std::string& site, int nodes = 2) {
  JobRequest r;
  r.site = site;
  r.nodes = nodes;
  r.command = {"python", "train.py"};
  const SiteProfile& p = sites().get(site);
  if (p.account.required) r.account = p.account.example;
  return r;
}

LaunchPlan plan(const JobRequest& r) { return make_plan(r, sites().get(r.site)); }

std::string error_of(const JobRequest& r) { return test::error_of_call([&] { plan(r); }); }

}  // namespace

TEST_SUITE_BEGIN("plan");

TEST_CASE("agent mode: one task per node with all of its CPUs") {
  JobRequest r = request("perlmutter");
  r.launcher = "agent";
  LaunchPlan p = plan(r);
  CHECK(p.launcher == LaunchMode::agent);
  CHECK(p.ntasks == 2);
  CHECK(p.ntasks_per_node == 1);
  CHECK(p.cpus_per_task == 128);  // 64 cores x 2 threads, as Slurm counts them on Perlmutter
  CHECK(p.workers_per_node == 4);
  CHECK(p.threads_per_worker == 16);
}

TEST_CASE("srun mode: one task per GPU, the node's CPUs shared out") {
  LaunchPlan p = plan(request("perlmutter"));  // Perlmutter's default
  CHECK(p.launcher == LaunchMode::srun);
  CHECK(p.ntasks == 8);
  CHECK(p.ntasks_per_node == 4);
  CHECK(p.cpus_per_task == 32);  // the seeds' --cpus-per-task=32
  CHECK(p.qos == "regular");
  CHECK(p.constraint == "gpu");
  CHECK(p.time_s == 3600);

  LaunchPlan jw = plan(request("juwels-booster"));
  CHECK(jw.cpus_per_task == 24);  // seed 004's --cpus-per-task=24
  CHECK(jw.partition == "booster");
}

TEST_CASE("mpirun mode has srun's geometry; PBS sites default to it") {
  LaunchPlan p = plan(request("sockeye-pbs"));
  CHECK(p.launcher == LaunchMode::mpirun);
  CHECK(p.ntasks == 8);
  CHECK(p.cpus_per_node == 8);  // the seed's ncpus=8
  CHECK(p.cpus_per_task == 2);
  JobRequest cc = request("cc");
  cc.launcher = "mpirun";
  CHECK(plan(cc).ntasks == 8);
}

TEST_CASE("pals mode: one rank per GPU, each with its share of the node's CPUs; it needs PBS") {
  LaunchPlan p = plan(request("polaris"));  // Polaris's default
  CHECK(p.launcher == LaunchMode::pals);
  CHECK(p.ntasks == 8);
  CHECK(p.ntasks_per_node == 4);
  CHECK(p.cpus_per_node == 64);  // 32 cores x 2 threads, as PBS counts them
  CHECK(p.cpus_per_task == 16);  // mpiexec --depth
  CHECK(p.threads_per_worker == 8);
  JobRequest pm = request("perlmutter");
  pm.launcher = "pals";
  CHECK_THROWS_WITH_AS(plan(pm), doctest::Contains("pals needs pbs"), Error);
  JobRequest sp = request("sockeye-pbs");
  sp.launcher = "pals";
  CHECK_THROWS_WITH_AS(plan(sp), doctest::Contains("does not offer 'pals'"), Error);
}

TEST_CASE("fewer GPUs than the node has get the same share of its cores, within the site's cap") {
  JobRequest r = request("cc-narval", 1);
  r.gpus_per_node = 1;
  r.launcher = "srun";
  LaunchPlan p = plan(r);
  CHECK(p.ntasks == 1);
  CHECK(p.cpus_per_task == 12);
  JobRequest m = request("mahti", 1);
  m.gpus_per_node = 2;
  CHECK(plan(m).cpus_per_node == 64);
}

TEST_CASE("OMP_NUM_THREADS is the cores per worker unless the user sets it") {
  LaunchPlan p = plan(request("perlmutter"));
  auto has = [&](const std::string& k, const std::string& v) {
    for (const auto& kv : p.env)
      if (kv.first == k && kv.second == v) return true;
    return false;
  };
  CHECK(has("OMP_NUM_THREADS", "16"));
  JobRequest r = request("perlmutter");
  r.env = {"OMP_NUM_THREADS=3", "X=a=b"};
  p = plan(r);
  CHECK(has("OMP_NUM_THREADS", "3"));
  CHECK_FALSE(has("OMP_NUM_THREADS", "16"));
  CHECK(has("X", "a=b"));
}

TEST_CASE("time limits are checked against the queue") {
  JobRequest r = request("perlmutter");
  r.time = "2-00:00:00";
  CHECK(plan(r).time_s == 2 * 86400);
  r.time = "2-00:00:01";
  CHECK(error_of(r) == "--time: 2-00:00:01 is more than the 2-00:00:00 limit of regular on perlmutter; use --time 2-00:00:00 or less, or another qos");
  r.qos = "debug";
  r.time = "45";
  CHECK(error_of(r) == "--time: 00:45:00 is more than the 00:30:00 limit of debug on perlmutter; use --time 00:30:00 or less, or another qos");
  r.time = "";
  CHECK(plan(r).time_s == 1800);  // the default hour is capped by the queue
  r.time = "soon";
  CHECK(error_of(r) == "--time: 'soon' is not a time limit; use MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS");
  JobRequest cc = request("cc");
  cc.time = "8-00";
  CHECK(error_of(cc) == "--time: 8-00:00:00 is more than the 7-00:00:00 limit of by-time on cc; use --time 7-00:00:00 or less");
}

TEST_CASE("bad input names the flag and the fix") {
  JobRequest r = request("perlmutter");
  r.nodes = 0;
  CHECK(error_of(r) == "--nodes: 0 is below 1; use --nodes 1 or more");
  r = request("perlmutter", 9);
  r.qos = "debug";
  CHECK(error_of(r) == "--nodes: 9 is more than the 8 nodes debug allows on perlmutter; use --nodes 8 or fewer, or another qos");
  r = request("puhti", 21);
  CHECK(error_of(r) == "--nodes: 21 is more than the 20 nodes gpu allows on puhti; use --nodes 20 or fewer, or another partition");
  r = request("perlmutter");
  r.gpus_per_node = 8;
  CHECK(error_of(r) == "--gpus-per-node: 8 is more than the 4 GPUs of a perlmutter node; use --gpus-per-node 4 or fewer and more --nodes");
  r = request("roihu");
  r.account = "";
  CHECK(error_of(r) == "--account: roihu requires an account; add --account project_2001234");
  r = request("perlmutter");
  r.account = "m3239";  // a name of another form: the scheduler judges, hpclaunch only warns
  CHECK(plan(r).warnings.back() == "'m3239' does not look like a perlmutter account ([a-z][a-z0-9]*_g, e.g. m3239_g); submitting it anyway");
  r = request("perlmutter");
  r.launcher = "torchrun";
  const std::string launchers = join_or(names_of(launch_mode_names()));  // the registry's: agent, srun, ...
  CHECK(launchers.rfind("agent, srun, mpirun", 0) == 0);
  CHECK(error_of(r) == "--launcher: unknown launcher 'torchrun'; use " + launchers);
  r.launcher = "srn";
  CHECK(error_of(r) == "--launcher: unknown launcher 'srn' (did you mean 'srun'?); use " + launchers);
  r.launcher = "mpirun";
  CHECK(error_of(r) == "--launcher: site perlmutter does not offer 'mpirun'; use one of: srun, agent");
  r = request("sockeye-pbs");
  r.launcher = "srun";
  CHECK(error_of(r) == "--launcher: " + launcher_needs(LaunchMode::srun) + ", but sockeye-pbs runs pbs; use --launcher mpirun");
  r = request("perlmutter");
  r.qos = "regulr";
  CHECK(error_of(r) == "--qos: site perlmutter has no qos 'regulr' (did you mean 'regular'?); use one of: regular, debug, preempt, shared, interactive");
  r = request("juwels-booster");
  r.partition = "gpu";
  CHECK(error_of(r) == "--partition: site juwels-booster has no partition 'gpu'; use one of: booster, develbooster");
  r = request("perlmutter");
  r.command.clear();
  CHECK(error_of(r) == "--: no command to run; put the command after `--`, e.g. `-- python train.py`");
  r = request("perlmutter");
  r.env = {"NOEQUALS"};
  CHECK(error_of(r) == "--env: 'NOEQUALS' has no '='; write --env NAME=VALUE");
  r.env = {"1A=b"};
  CHECK(error_of(r) == "--env: '1A' is not a variable name; use letters, digits and _, not starting with a digit");
  r = request("perlmutter");
  r.modules = {"pytorch; rm -rf /"};
  CHECK(error_of(r) == "--module: 'pytorch; rm -rf /' is not a module name; give one module per --module, e.g. --module pytorch/2.1");
  r = request("local");
  r.container = "img.sif";
  CHECK(error_of(r) == "--container: site local has no container runtime in its profile; drop --container, or add `container:` to the profile with --site-file");
}

TEST_CASE("containers wrap the command with the site's runtime") {
  JobRequest r = request("cc");
  r.container = "/scratch/pytorch.sif";
  LaunchPlan p = plan(r);
  CHECK(p.command == std::vector<std::string>{"apptainer", "exec", "--nv", "/scratch/pytorch.sif", "python", "train.py"});
  CHECK(p.user_command == std::vector<std::string>{"python", "train.py"});
  CHECK(p.modules.back() == "apptainer");
}

TEST_CASE("job names come from the script, not the interpreter") {
  JobRequest r = request("perlmutter");
  CHECK(plan(r).job_name == "train");
  r.command = {"python3", "-u", "/path/to/my.model.py", "--x"};
  CHECK(plan(r).job_name == "my_model");
  r.command = {"bash", "-c", "echo $RANK"};
  CHECK(plan(r).job_name == "bash");
  r.command = {"python", "-m", "pkg.train", "--x"};
  CHECK(plan(r).job_name == "pkg");
  r.command = {"./run experiment.sh"};
  CHECK(plan(r).job_name == "run_experiment");
  r.command = {"hpclaunch-train", "--model", "resnet"};
  CHECK(plan(r).job_name == "hpclaunch-train");
  r.name = "mine";
  CHECK(plan(r).job_name == "mine");
}

TEST_CASE("a retired site plans but warns and names its successors") {
  LaunchPlan p = plan(request("puhti"));
  REQUIRE(p.warnings.size() == 1);
  CHECK(p.warnings[0] == "puhti was retired on 2026-07-31; consider roihu (--site roihu)");
  for (const auto& w : plan(request("roihu", 1)).warnings) CHECK(w.find("retired") == std::string::npos);
  CHECK(test::error_of_call([&] { check_submittable(p); }) ==
        "--site: puhti was retired on 2026-07-31: a job sent there is never run; use --site roihu (render and --dry-run still show puhti's script)");
  CHECK(test::error_of_call([&] { check_submittable(plan(request("roihu", 1))); }) == "(no error)");
}

TEST_CASE("the plan as JSON carries the geometry") {
  nlohmann::json j = plan_file(plan(request("perlmutter")));
  CHECK(j["world_size"] == 8);
  CHECK(j["launcher"] == "srun");
  CHECK(j["time"] == "01:00:00");
  CHECK(j["command"] == nlohmann::json::array({"python", "train.py"}));
}

TEST_SUITE_END();

TEST_SUITE_BEGIN("requeue");

TEST_CASE("warning signals parse in sbatch's forms") {
  std::string name, err;
  int secs = 0;
  CHECK(parse_warning_signal("USR1@120", &name, &secs, &err));
  CHECK(name == "USR1");
  CHECK(secs == 120);
  CHECK(parse_warning_signal("B:SIGUSR2@30", &name, &secs, &err));
  CHECK(name == "USR2");
  CHECK(secs == 30);
  CHECK(parse_warning_signal("10", &name, &secs, &err));  // SIGUSR1 by number, default 120 s
  CHECK(name == "USR1");
  CHECK(secs == 120);
  CHECK_FALSE(parse_warning_signal("KILL@60", &name, &secs, &err));
  CHECK(err == "'KILL' is not a signal a job can catch");
  CHECK_FALSE(parse_warning_signal("USR@60", &name, &secs, &err));
  CHECK(err == "'USR' is not a signal a job can catch (did you mean 'USR1'?)");
  CHECK_FALSE(parse_warning_signal("USR1@soon", &name, &secs, &err));
  CHECK(err == "'soon' is not a number of seconds (1-65535)");
}

TEST_CASE("--requeue asks Slurm for the warning signal and a requeue budget") {
  JobRequest r = request("perlmutter");
  CHECK_FALSE(plan(r).requeue);
  CHECK(plan(r).warning_signal.empty());
  r.requeue = true;
  LaunchPlan p = plan(r);
  CHECK(p.requeue);
  CHECK(p.warning_signal == "USR1");
  CHECK(p.warning_seconds == 120);
  CHECK(p.max_requeues == 3);
  r.signal = "USR2@45";
  r.max_requeues = 7;
  p = plan(r);
  CHECK(p.warning_signal == "USR2");
  CHECK(p.warning_seconds == 45);
  CHECK(p.max_requeues == 7);
  r = request("perlmutter");
  r.signal = "USR1@60";  // a warning without requeueing: passed on, no requeue
  p = plan(r);
  CHECK_FALSE(p.requeue);
  CHECK(p.warning_seconds == 60);
}

TEST_CASE("a time limit that leaves a run no time before Slurm's earliest warning is warned about") {
  JobRequest r = request("perlmutter");
  r.requeue = true;
  r.time = "1";
  r.signal = "USR1@45";
  LaunchPlan p = plan(r);
  REQUIRE(p.warnings.size() == 1);
  CHECK(p.warnings[0] ==
        "--signal: Slurm may send the warning up to 60 s early, so with --time 60 s and the warning 45 s before the end it "
        "can come 0 s into every run; ask for --time 165 s or more to leave each run time to train");
  r.time = "4";  // 240 s: the earliest warning 135 s in
  CHECK(plan(r).warnings.empty());
  r.time = "0:02:44";  // one second short
  CHECK(plan(r).warnings.size() == 1);
  r.time = "0:02:45";
  CHECK(plan(r).warnings.empty());
  r.requeue = false;
  r.signal.clear();
  r.time = "1";
  CHECK(plan(r).warnings.empty());
}

TEST_CASE("bad requeue input names the flag") {
  JobRequest r = request("perlmutter");
  r.requeue = true;
  r.time = "2";
  CHECK(error_of(r) == "--signal: the warning 120 s before the end would come before the job starts (--time is 120 s); use --signal USR1@60 or less, or a longer --time");
  r = request("perlmutter");
  r.signal = "KILL@60";
  CHECK(error_of(r) == "--signal: 'KILL' is not a signal a job can catch; write e.g. --signal USR1@120");
  r = request("sockeye-pbs");
  r.requeue = true;
  // What PBS cannot do, as its capabilities say (exclude_nodes, warning_signal).
  CHECK(error_of(r) == "--requeue: sockeye-pbs runs pbs, which sends no warning signal and cannot requeue a job; "
                       "drop the flag; resume by hand with the trainer's --resume");
  r = request("gadi");
  r.signal = "USR1@60";
  CHECK(error_of(r) == "--signal: gadi runs pbs, which sends no warning signal and cannot requeue a job; drop the "
                       "flag; resume by hand with the trainer's --resume");
  r = request("perlmutter");
  r.max_requeues = -1;
  CHECK(error_of(r) == "--max-requeues: is below 0; use 0 or more");
}

TEST_CASE("a profile can turn requeueing on by default") {
  SiteRegistry reg = builtin_sites();
  reg.add({{"pre.yaml", "name: pm-preempt\nextends: perlmutter\nrequeue: {enabled: true, signal: USR2@300, max_requeues: 9}\n"}});
  JobRequest r = request("perlmutter");
  r.site = "pm-preempt";
  LaunchPlan p = make_plan(r, reg.get("pm-preempt"));
  CHECK(p.requeue);
  CHECK(p.warning_signal == "USR2");
  CHECK(p.warning_seconds == 300);
  CHECK(p.max_requeues == 9);
  r.requeue = false;
  CHECK_FALSE(make_plan(r, reg.get("pm-preempt")).requeue);
}

TEST_CASE("the local site requeues: its runner runs the script again, and the signal comes from cancel --signal") {
  JobRequest r = request("local");
  r.requeue = true;
  r.max_requeues = 2;
  LaunchPlan p = plan(r);
  CHECK(p.requeue);
  CHECK(p.max_requeues == 2);
  CHECK(p.warning_signal == "USR1");  // the profile's default; the runner keeps no time limit to send it before
  r.signal = "USR2@60";
  CHECK(plan(r).warning_signal == "USR2");
  CHECK_FALSE(plan(request("local")).requeue);  // off unless asked
}

TEST_CASE("a PBS profile's requeueing is one line of the plan's warnings, not a script part that does nothing") {
  SiteRegistry reg = builtin_sites();
  reg.add({{"pre.yaml", "name: gadi-requeue\nextends: gadi\nrequeue: {enabled: true}\n"}});
  JobRequest r = request("gadi");
  r.site = "gadi-requeue";
  LaunchPlan p = make_plan(r, reg.get("gadi-requeue"));
  CHECK_FALSE(p.requeue);
  CHECK(p.warning_signal.empty());
  const std::string line = "gadi-requeue's profile asks for requeueing, but pbs sends no warning signal and cannot "
                           "requeue a job: the script has no requeue";
  CHECK(std::count(p.warnings.begin(), p.warnings.end(), line) == 1);
  LaunchPlan plain = plan(request("gadi"));  // no requeue asked, no line
  CHECK(std::count(plain.warnings.begin(), plain.warnings.end(), line) == 0);
}

TEST_CASE("--preflight where the scheduler cannot requeue without the bad nodes says so in one line") {
  const std::string line = "--preflight: pbs cannot requeue a job without its bad nodes, so a failed preflight ends the "
                           "job; `hpclaunch status` names the nodes, and the job must be submitted again";
  auto preflight_lines = [](const JobRequest& r) {
    const std::vector<std::string> w = plan(r).warnings;
    return std::count_if(w.begin(), w.end(), [](const std::string& s) { return s.rfind("--preflight", 0) == 0; });
  };
  for (const char* site : {"gadi", "polaris"}) {
    CAPTURE(site);
    JobRequest r = request(site);
    CHECK(preflight_lines(r) == 0);  // no --preflight, no line
    r.preflight = true;
    LaunchPlan p = plan(r);
    CHECK(std::count(p.warnings.begin(), p.warnings.end(), line) == 1);
    CHECK(preflight_lines(r) == 1);
  }
  JobRequest r = request("perlmutter");  // Slurm requeues without them (with --requeue): no line
  r.preflight = true;
  CHECK(preflight_lines(r) == 0);
  r.requeue = true;
  CHECK(preflight_lines(r) == 0);
}

TEST_SUITE_END();

}  // namespace plan_test

namespace plan_test {

TEST_CASE("--hang-timeout is the agent's, from the flag or the profile; another launch refuses the flag") {
  auto value = [](const LaunchPlan& p) {
    std::string v;
    for (const auto& kv : p.env)
      if (kv.first == "HPCLAUNCH_HANG_TIMEOUT") v = kv.second;
    return v;
  };
  JobRequest r = request("perlmutter");
  r.launcher = "agent";
  CHECK(value(plan(r)).empty());  // off by default
  r.hang_timeout = 600;
  CHECK(value(plan(r)) == "600");
  r.env = {"HPCLAUNCH_HANG_TIMEOUT=30"};
  CHECK(value(plan(r)) == "30");  // the user's own --env wins
  r.env.clear();
  r.launcher = "srun";
  CHECK(error_of(r) == "--hang-timeout: the srun launch starts the command itself: only the agent watches for hangs; "
                       "use --launcher agent, or drop --hang-timeout");
  r.hang_timeout = 0;
  CHECK(value(plan(r)).empty());
  r.hang_timeout = -1;
  r.launcher = "agent";
  CHECK(error_of(r) == "--hang-timeout: -1 is below 0; use 0 (off) or more seconds");

  SiteRegistry reg = builtin_sites();
  reg.add({{"hang.yaml", "name: pm-hang\nextends: perlmutter\nrequeue: {hang_timeout: 900}\n"}});
  JobRequest d = request("perlmutter");
  d.site = "pm-hang";
  d.launcher = "agent";
  CHECK(value(make_plan(d, reg.get("pm-hang"))) == "900");
  d.launcher = "srun";  // the profile's default is for its agent jobs only
  CHECK(value(make_plan(d, reg.get("pm-hang"))).empty());
  d.hang_timeout = 0;
  d.launcher = "agent";
  CHECK(value(make_plan(d, reg.get("pm-hang"))).empty());
}

}  // namespace plan_test

namespace plan_test {

TEST_CASE("--spares: the allocation holds them too, the agents run on the rest; another launch refuses the flag") {
  JobRequest r = request("perlmutter");
  r.launcher = "agent";
  r.nodes = 4;
  r.spares = 1;
  LaunchPlan p = plan(r);
  CHECK(p.nodes == 5);  // #SBATCH --nodes, srun --nodes: the spare is in the allocation
  CHECK(p.spares == 1);
  CHECK(p.ntasks == 5);  // one agent per node, the spare's too
  r.launcher = "srun";
  CHECK(error_of(r) == "--spares: the srun launch starts every rank at once: only the agent can hold a node back as a "
                       "spare; use --launcher agent, or drop --spares");
  r.spares = -2;
  r.launcher = "agent";
  CHECK(error_of(r) == "--spares: -2 is below 0; use 0 (none) or more nodes");
  // A queue's node limit counts the spares: they are nodes of the job.
  r.spares = 1;
  r.nodes = 1;
  CHECK(plan(r).nodes == 2);

  SiteRegistry reg = builtin_sites();
  reg.add({{"spare.yaml", "name: pm-spare\nextends: perlmutter\nrequeue: {spares: 2}\n"}});
  JobRequest d = request("perlmutter");
  d.site = "pm-spare";
  d.launcher = "agent";
  CHECK(make_plan(d, reg.get("pm-spare")).spares == 2);
  d.launcher = "srun";  // the profile's default is for its agent jobs only
  CHECK(make_plan(d, reg.get("pm-spare")).spares == 0);
  CHECK(make_plan(d, reg.get("pm-spare")).nodes == 2);
  d.spares = 0;
  d.launcher = "agent";
  CHECK(make_plan(d, reg.get("pm-spare")).nodes == 2);
  // PBS's agents are started by mpirun, which ends them all when one is lost.
  JobRequest g = request("gadi");
  g.launcher = "agent";
  g.spares = 1;
  CHECK(error_of(g) == "--spares: PBS's agent launch starts the agents with mpirun, which ends them all when one is "
                       "lost; drop --spares (a lost node then ends the run, and --requeue starts it again)");
}

}  // namespace plan_test

namespace plan_test {

TEST_CASE("a command that is torchrun itself is refused, saying how to write it (it would run once per slot)") {
  JobRequest r = request("local");
  r.command = {"torchrun", "--nproc_per_node=2", "x.py", "--lr", "1"};
  CHECK(error_of(r) == "--: the command is torchrun, which starts its own workers, but the job's launch starts a copy "
                       "of it in every worker slot: the world would be the wrong size; drop it and its flags and give "
                       "the script, `-- python SCRIPT ARG...`: the agent launch does torchrun's job (--gpus-per-node is "
                       "its --nproc-per-node)");
  r.command = {"/usr/bin/python3", "-m", "torch.distributed.run", "--nnodes", "2", "train.py"};
  CHECK(error_of(r).find("the command is python -m torch.distributed.run,") == 4);
  r.command = {"python", "-m", "torch.distributed.launch", "train.py"};
  CHECK(error_of(r).find("the command is python -m torch.distributed.launch,") == 4);
  r.command = {"/opt/bin/hpclaunch", "torchrun", "--standalone", "t.py"};
  CHECK(error_of(r).find("the command is hpclaunch torchrun,") == 4);
  r.command = {"python", "train.py", "--launcher", "torchrun"};  // a word, not the program
  CHECK_NOTHROW(plan(r));
  r.command = {"python", "-m", "mypkg.train"};
  CHECK_NOTHROW(plan(r));
}

}  // namespace plan_test

namespace plan_test {

TEST_CASE("alps-clariden's debug partition allows 90 node-minutes a job (the 2026-11 audit)") {
  JobRequest r = request("alps-clariden", 4);
  r.partition = "debug";
  r.account = "g123";
  r.time = "00:22:00";
  CHECK(plan(r).time_s == 22 * 60);
  r.time = "00:30:00";
  CHECK(error_of(r).find("--time: 00:30:00 is more than the 00:22:00 limit of debug for 4 node(s) on alps-clariden") == 0);
  r.nodes = 2;
  r.time = "00:45:00";
  CHECK(plan(r).time_s == 45 * 60);
  r.nodes = 1;
  r.time = "01:30:00";
  CHECK(plan(r).time_s == 90 * 60);
}

TEST_SUITE_BEGIN("plan_topology");

namespace {
// A block-topology site of the clouds' kind (GB200 NVL72: 18 nodes of 4 GPUs a rack) at a given Slurm release.
SiteProfile nvl72(const std::string& version, const std::string& queue_extra = "") {
  const std::string text = "name: nvl72\nscheduler: slurm\n" + (version.empty() ? "" : "scheduler_version: \"" + version + "\"\n") +
                           "node: {gpus: 4, cores: 144}\nlaunch: {default: srun, allowed: [srun, agent]}\n"
                           "queues: [{name: batch, default: true, segment: 2" + queue_extra + "}]\n";
  return read_profiles({"nvl72.yaml", text}, [](const std::string&) { return nullptr; }, scheduler_checks()).front();
}
JobRequest nvl72_request(int nodes) {
  JobRequest r;
  r.site = "nvl72";
  r.nodes = nodes;
  r.command = {"python", "train.py"};
  return r;
}
bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }
}  // namespace

TEST_CASE("a queue's segment is asked as --segment, and a node count that is no multiple of it is refused") {
  const LaunchPlan p = make_plan(nvl72_request(4), nvl72("24.11"));
  CHECK(p.segment == 2);
  CHECK(has(dialect_for(Scheduler::slurm).directives(p, {"/w", "/w/j"}), "--segment=2"));
  CHECK(test::error_of_call([] { make_plan(nvl72_request(3), nvl72("24.11")); }) ==
        "--segment: 3 node(s) are not a multiple of the segment size 2; use --nodes 2 or 4, or a --segment that divides 3");
  CHECK(test::error_of_call([] { make_plan(nvl72_request(1), nvl72("24.11")); }).find("use --nodes 2, or") != std::string::npos);
  JobRequest spare = nvl72_request(3);
  spare.launcher = "agent";
  spare.spares = 1;  // 3 + 1 spare: 4 nodes, 2 segments
  CHECK(make_plan(spare, nvl72("24.11")).segment == 2);
  JobRequest own = nvl72_request(3);
  own.segment = 3;  // --segment wins over the queue's
  CHECK(make_plan(own, nvl72("24.11")).segment == 3);
  own.segment = 0;  // --segment 0: none
  CHECK(make_plan(own, nvl72("24.11")).segment == 0);
}

TEST_CASE("topology options are checked against the site's Slurm release: --segment needs 24.05, 25.11's options 25.11") {
  CHECK(test::error_of_call([] { make_plan(nvl72_request(4), nvl72("23.11")); }) ==
        "--segment: --segment needs Slurm 24.05 or later, and the site's is 23.11; drop --segment (or the queue's "
        "`segment:`), or fix the profile's scheduler_version");
  CHECK(make_plan(nvl72_request(4), nvl72("")).segment == 2);  // unknown release: rendered as asked
  // The profile takes any N.N[.N]; a release written without its leading zero is still compared as a number
  // (it used to read as unknown and render --segment for a 23.02 site).
  CHECK(test::error_of_call([] { make_plan(nvl72_request(4), nvl72("23.2")); }).find("--segment needs Slurm 24.05 or later, and the site's is 23.2") != std::string::npos);
  CHECK(make_plan(nvl72_request(4), nvl72("24.5")).segment == 2);
  CHECK(make_plan(nvl72_request(4), nvl72("25.05.3")).segment == 2);
  const std::string newer = ", segment_options: [--consolidate-segments, --network=unique-channel-per-segment]";
  CHECK(test::error_of_call([&] { make_plan(nvl72_request(4), nvl72("24.11", newer)); })
            .find("--consolidate-segments needs Slurm 25.11 or later, and the site's is 24.11") != std::string::npos);
  const LaunchPlan p = make_plan(nvl72_request(4), nvl72("25.11", newer));
  const auto d = dialect_for(Scheduler::slurm).directives(p, {"/w", "/w/j"});
  CHECK(has(d, "--consolidate-segments"));
  CHECK(has(d, "--network=unique-channel-per-segment"));
  JobRequest excl = nvl72_request(4);
  excl.exclusive_topo = true;
  CHECK(has(make_plan(excl, nvl72("24.11")).topology_options, "--exclusive=topo"));
  JobRequest pbs = request("polaris");
  pbs.segment = 2;
  CHECK(error_of(pbs).find("--segment: --segment is Slurm's (block topology); pbs has no such option") == 0);
  CHECK(test::error_of_call([] { nvl72("latest"); }).find("nvl72.yaml:3:20: scheduler_version: 'latest' is not a release") == 0);
}

TEST_SUITE_END();

}  // namespace plan_test
