#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "plan/plan.h"
#include "render/render.h"
#include "site/registry.h"
#include "test_util.h"

namespace render_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

namespace {

using test::sites;

const RenderContext k_ctx = {"/opt/hpclaunch/bin/hpclaunch", "/home/user/project", "/home/user/project/hpclaunch-jobs/train"};

LaunchPlan plan_for(const std::string& site, LaunchMode mode, std::vector<std::string> cmd = {"python", "train.py", "--epochs", "2"}) {
  JobRequest r;
  r.site = site;
  r.nodes = 2;
  r.launcher = to_string(mode);
  r.command = std::move(cmd);
  const SiteProfile& p = sites().get(site);
  if (p.account.required) r.account = p.account.example;
  return make_plan(r, p);
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_SUITE_BEGIN("render");

// tests/golden/SITE--LAUNCHER.sh is what every built-in site renders for a 2-node job with each launcher it
// offers. HPCLAUNCH_UPDATE_GOLDEN=1 rewrites them; review the diff (docs/golden-scripts.md explains them).
TEST_CASE("golden scripts for every site and launcher") {
  std::filesystem::path dir = std::filesystem::path(HPCLAUNCH_SOURCE_DIR) / "tests" / "golden";
  bool update = std::getenv("HPCLAUNCH_UPDATE_GOLDEN") != nullptr;
  int checked = 0;
  for (const SiteProfile* site : sites().all()) {
    for (LaunchMode mode : site->launchers) {
      std::string script = render_script(plan_for(site->name, mode), k_ctx);
      auto path = dir / (site->name + "--" + to_string(mode) + ".sh");
      if (update) std::ofstream(path) << script;
      REQUIRE_MESSAGE(std::filesystem::exists(path), "missing golden file " << path.string());
      CHECK_MESSAGE(read_file(path) == script, "golden differs: " << path.string());
      ++checked;
    }
  }
  CHECK(checked >= 20);
}

TEST_CASE("directives follow the site's way of asking for GPUs") {
  std::string pm = render_script(plan_for("perlmutter", LaunchMode::srun), k_ctx);
  CHECK(pm.find("#SBATCH --gpus-per-node=4\n") != std::string::npos);
  CHECK(pm.find("#SBATCH --constraint=gpu\n") != std::string::npos);
  CHECK(pm.find("#SBATCH --qos=regular\n") != std::string::npos);
  CHECK(pm.find("#SBATCH --account") == std::string::npos);  // not required: the default project is charged
  CHECK(pm.find("#SBATCH --mem=0\n") != std::string::npos);
  CHECK(pm.find("#SBATCH --ntasks-per-node=4\n") != std::string::npos);
  CHECK(pm.find("#SBATCH --cpus-per-task=32\n") != std::string::npos);
  CHECK(pm.find("export SRUN_CPUS_PER_TASK=\"$SLURM_CPUS_PER_TASK\"") != std::string::npos);
  CHECK(pm.find("\"$HPCLAUNCH\" exec -- python train.py --epochs 2") != std::string::npos);

  std::string puhti = render_script(plan_for("puhti", LaunchMode::agent), k_ctx);
  CHECK(puhti.find("#SBATCH --gres=gpu:v100:4\n") != std::string::npos);
  CHECK(puhti.find("#SBATCH --ntasks-per-node=1\n") != std::string::npos);
  CHECK(puhti.find("WARNING: this site is retired 2026-07-31; successors: roihu") != std::string::npos);
  CHECK(puhti.find("agent --nnodes 2 --nproc-per-node 4 --") != std::string::npos);

  std::string cc = render_script(plan_for("cc", LaunchMode::agent), k_ctx);
  CHECK(cc.find("#SBATCH --gpus-per-node=h100:4\n") != std::string::npos);
  CHECK(cc.find("--partition") == std::string::npos);  // the Alliance routes by time

  std::string jw = render_script(plan_for("juwels-booster", LaunchMode::srun), k_ctx);
  CHECK(jw.find("#SBATCH --gres=gpu:4\n") != std::string::npos);
  CHECK(jw.find("#SBATCH --mem=0\n") != std::string::npos);
  CHECK(jw.find("export HPCLAUNCH_MASTER_ADDR_SUFFIX=i\n") != std::string::npos);
  CHECK(jw.find("export HPCLAUNCH_MASTER_ADDR_RESOLVE=1\n") != std::string::npos);
}

TEST_CASE("the PBS script has the seed's form") {
  std::string s = render_script(plan_for("sockeye-pbs", LaunchMode::mpirun), k_ctx);
  CHECK(s.find("#PBS -l walltime=01:00:00,select=2:ncpus=8:ngpus=4:mem=64gb:gpu_mem=32gb\n") != std::string::npos);
  CHECK(s.find("#PBS -A st-someprof-1-gpu\n") != std::string::npos);
  CHECK(s.find("cd \"$PBS_O_WORKDIR\"") != std::string::npos);
  // The seed's -map-by :OVERSUBSCRIBE placed ranks by the nodefile's slots; ppr puts 4 on each node.
  CHECK(s.find("mpirun -np 8 --tag-output --hostfile \"$PBS_NODEFILE\" --map-by ppr:4:node --oversubscribe -bind-to none") != std::string::npos);
  CHECK(s.find("-mca pml ob1 -mca btl ^openib") != std::string::npos);
  CHECK(s.find("-x CUDA_VISIBLE_DEVICES") != std::string::npos);
  CHECK(s.find("export CUDA_VISIBLE_DEVICES=0,1,2,3\n") != std::string::npos);
  CHECK(s.find("export MASTER_ADDR=\"$(hostname -s)\"") != std::string::npos);
  CHECK(s.find("SRUN_CPUS_PER_TASK") == std::string::npos);
}

TEST_CASE("the PALS script asks Polaris's whole nodes and starts one rank per GPU with mpiexec") {
  std::string s = render_script(plan_for("polaris", LaunchMode::pals), k_ctx);
  CHECK(s.find("#PBS -l walltime=01:00:00,select=2:ncpus=64:ngpus=4:mpiprocs=4:system=polaris\n") != std::string::npos);
  CHECK(s.find("#PBS -l filesystems=home:eagle\n") != std::string::npos);
  CHECK(s.find("#PBS -l place=scatter\n") != std::string::npos);
  CHECK(s.find("#PBS -q debug\n") != std::string::npos);
  CHECK(s.find("mpiexec -n 8 --ppn 4 --depth 8 --cpu-bind depth \\\n  \"$HPCLAUNCH\" exec -- python train.py") != std::string::npos);
  CHECK(s.find("mpirun -np") == std::string::npos);
  CHECK(s.find("export HPCLAUNCH_GPU_BIND=none\n") != std::string::npos);  // every rank sees the 4 GPUs
  std::string derecho = render_script(plan_for("derecho", LaunchMode::pals), k_ctx);
  CHECK(derecho.find("#PBS -l walltime=01:00:00,select=2:ncpus=64:ngpus=4:mpiprocs=4\n") != std::string::npos);  // NCAR's GPU form
  CHECK(derecho.find("#PBS -q main\n") != std::string::npos);
}

TEST_CASE("user strings reach the script shell-quoted") {
  std::vector<std::string> awkward = {"python", "a b", "it's", "$HOME", "`id`", "x;y", "line1\nline2", "", "*.py", "\"q\""};
  std::string s = render_script(plan_for("perlmutter", LaunchMode::srun, awkward), k_ctx);
  CHECK(s.find("exec -- python 'a b' 'it'\\''s' '$HOME' '`id`' 'x;y' 'line1\nline2' '' '*.py' '\"q\"'\n") != std::string::npos);
}

// One failed rank ends a direct launch (as mpirun does by default); agents handle failures themselves.
TEST_CASE("direct srun launches end the step when a rank fails, agent launches do not") {
  int checked = 0;
  for (const SiteProfile* p : sites().all()) {
    if (p->scheduler != Scheduler::slurm) continue;
    CAPTURE(p->name);
    if (p->allows(LaunchMode::srun)) {
      CHECK(render_script(plan_for(p->name, LaunchMode::srun), k_ctx).find("srun --label --kill-on-bad-exit=1 ") !=
            std::string::npos);
      ++checked;
    }
    if (p->allows(LaunchMode::agent))
      CHECK(render_script(plan_for(p->name, LaunchMode::agent), k_ctx).find("kill-on-bad-exit") == std::string::npos);
  }
  CHECK(checked >= 10);
}

TEST_CASE("a requeueing job traps the warning, passes it on and requeues within its budget") {
  JobRequest r;
  r.site = "perlmutter";
  r.nodes = 2;
  r.account = "m1_g";
  r.requeue = true;
  r.command = {"hpclaunch-train", "--resume"};
  std::string s = render_script(make_plan(r, sites().get("perlmutter")), k_ctx);
  CHECK(s.find("#SBATCH --signal=B:USR1@120\n#SBATCH --requeue\n#SBATCH --open-mode=append\n") != std::string::npos);
  CHECK(s.find("trap hpclaunch_warning USR1\n") != std::string::npos);
  CHECK(s.find("trap hpclaunch_warning USR1\n") < s.find("export SRUN_CPUS_PER_TASK"));  // before anything slow
  CHECK(s.find("the job was warned already; ignored") != std::string::npos);                 // passed on once
  CHECK(s.find("kill -USR1 \"$hpclaunch_launch\"") != std::string::npos);
  CHECK(s.find("exec -- hpclaunch-train --resume &\n") != std::string::npos);
  CHECK(s.find("if [ \"${SLURM_RESTART_COUNT:-0}\" -lt 3 ]; then") != std::string::npos);
  CHECK(s.find("scontrol requeue \"$SLURM_JOB_ID\"") != std::string::npos);
  r.requeue = false;
  std::string plain = render_script(make_plan(r, sites().get("perlmutter")), k_ctx);
  CHECK(plain.find("trap") == std::string::npos);
  CHECK(plain.find("--resume &") == std::string::npos);
}

TEST_SUITE_BEGIN("render");

TEST_CASE("--preflight runs `hpclaunch check` with the command's own launch first, on every scheduler") {
  auto with_preflight = [](const std::string& site, LaunchMode mode, bool requeue) {
    JobRequest r;
    r.site = site;
    r.nodes = 2;
    r.launcher = to_string(mode);
    r.preflight = true;
    if (requeue) r.requeue = true;
    r.command = {"python", "train.py"};
    const SiteProfile& p = sites().get(site);
    if (p.account.required) r.account = p.account.example;
    return render_script(make_plan(r, p), k_ctx);
  };
  std::string s = with_preflight("perlmutter", LaunchMode::srun, false);
  size_t check = s.find("\"$HPCLAUNCH\" exec -- \"$HPCLAUNCH\" check --expect-gpus 4\n");
  size_t train = s.find("\"$HPCLAUNCH\" exec -- python train.py\n");
  REQUIRE(check != std::string::npos);
  REQUIRE(train != std::string::npos);
  CHECK(check < train);
  CHECK(s.find("srun --label --kill-on-bad-exit=1 --nodes=2 --ntasks=8") < check);  // the same geometry
  CHECK(s.find("exclude --from-preflight \"$HPCLAUNCH_JOB_DIR/preflight.json\"  #") != std::string::npos);
  CHECK(s.find("--requeue && exit 0") == std::string::npos);
  CHECK(s.find("exit \"$hpclaunch_rc\"\nfi\n") < train);

  std::string rq = with_preflight("perlmutter", LaunchMode::agent, true);
  CHECK(rq.find("agent --nnodes 2 --nproc-per-node 4 -- \"$HPCLAUNCH\" check --expect-gpus 4\n") != std::string::npos);
  CHECK(rq.find("agent --nnodes 2 --nproc-per-node 4 -- python train.py &\n") != std::string::npos);  // only it
  CHECK(rq.find("trap '' TERM") < rq.find("--requeue && exit 0"));
  CHECK(rq.find("export HPCLAUNCH_RDZV_SECRET") < rq.find("check --expect-gpus"));
  CHECK(rq.find("export HPCLAUNCH_RDZV_SECRET", rq.find("export HPCLAUNCH_RDZV_SECRET") + 1) == std::string::npos);

  std::string pbs = with_preflight("polaris", LaunchMode::pals, false);
  CHECK(pbs.find("--cpu-bind depth \\\n  \"$HPCLAUNCH\" exec -- \"$HPCLAUNCH\" check --expect-gpus 4\n") != std::string::npos);
  CHECK(pbs.find("--requeue") == std::string::npos);
  std::string local = with_preflight("local", LaunchMode::agent, false);
  CHECK(local.find("-- \"$HPCLAUNCH\" check") < local.find("-- python train.py"));

  JobRequest plain;
  plain.site = "perlmutter";
  plain.account = "m1_g";
  plain.command = {"python", "train.py"};
  std::string none = render_script(make_plan(plain, sites().get("perlmutter")), k_ctx);
  CHECK(none.find("check") == std::string::npos);
  CHECK(none.find("exclude") == std::string::npos);
}

TEST_SUITE_END();

TEST_SUITE_BEGIN("render");

TEST_CASE("a profile's interconnect busbw reaches the multi-node preflight; a figure without a source is refused") {
  SiteRegistry reg = builtin_sites();
  reg.add({{"fast.yaml", "name: fast\nextends: perlmutter\ninterconnect: {busbw_gbs: 40, source: \"our nccl-tests run\"}\n"}});
  JobRequest r;
  r.site = "fast";
  r.nodes = 2;
  r.account = "m1_g";
  r.preflight = true;
  r.command = {"python", "train.py"};
  std::string two = render_script(make_plan(r, reg.get("fast")), k_ctx);
  CHECK(two.find("check --expect-gpus 4 --expect-busbw 40\n") != std::string::npos);
  r.nodes = 1;
  CHECK(render_script(make_plan(r, reg.get("fast")), k_ctx).find("--expect-busbw") == std::string::npos);
  CHECK_THROWS_WITH(reg.add({{"bad.yaml", "name: bad\nextends: perlmutter\ninterconnect: {busbw_gbs: 40}\n"}}),
                    doctest::Contains("bad.yaml:3:15: interconnect: busbw_gbs without a source"));
  // The NVLink domain's figure goes to the check on one node too (a domain's GPUs share it); it needs a source as well.
  reg.add({{"nvl.yaml", "name: nvl\nextends: perlmutter\ninterconnect: {busbw_gbs: 40, nvlink_busbw_gbs: 700, source: \"s\"}\n"}});
  r.site = "nvl";
  CHECK(render_script(make_plan(r, reg.get("nvl")), k_ctx).find("check --expect-gpus 4 --expect-nvlink-busbw 700\n") != std::string::npos);
  r.nodes = 2;
  CHECK(render_script(make_plan(r, reg.get("nvl")), k_ctx).find("check --expect-gpus 4 --expect-busbw 40 --expect-nvlink-busbw 700\n") != std::string::npos);
  CHECK_THROWS_WITH(reg.add({{"bad2.yaml", "name: bad2\nextends: perlmutter\ninterconnect: {nvlink_busbw_gbs: 700}\n"}}),
                    doctest::Contains("bad2.yaml:3:15: interconnect: nvlink_busbw_gbs without a source"));
}

TEST_SUITE_END();

TEST_SUITE_BEGIN("render");

TEST_CASE("a requeueing agent job requeues without a node its agents lost; direct launches do not") {
  JobRequest r;
  r.site = "perlmutter";
  r.nodes = 2;
  r.account = "m1_g";
  r.requeue = true;
  r.launcher = "agent";
  r.command = {"hpclaunch-train", "--resume"};
  std::string s = render_script(make_plan(r, sites().get("perlmutter")), k_ctx);
  size_t clear = s.find("rm -f \"$HPCLAUNCH_JOB_DIR/failure.json\"");
  size_t launch = s.find("agent --nnodes 2");
  size_t exclude = s.find("\"$HPCLAUNCH\" exclude --from-failure \"$HPCLAUNCH_JOB_DIR/failure.json\" --requeue && exit 0");
  REQUIRE(clear != std::string::npos);
  REQUIRE(exclude != std::string::npos);
  CHECK(clear < launch);
  CHECK(launch < exclude);
  CHECK(exclude < s.find("scontrol requeue \"$SLURM_JOB_ID\""));  // before the warned/99 requeue
  CHECK(s.find("[ -z \"$hpclaunch_warned\" ] && [ \"$hpclaunch_rc\" -ne 99 ]") != std::string::npos);
  r.launcher = "srun";
  CHECK(render_script(make_plan(r, sites().get("perlmutter")), k_ctx).find("--from-failure") == std::string::npos);
}

TEST_SUITE_END();

TEST_SUITE_BEGIN("render");

// tests/golden/sweep--SITE--LAUNCHER.sh: a 2 x 2 sweep, at most 2 tasks at once, on Slurm, PBS and the local site
// (HPCLAUNCH_UPDATE_GOLDEN=1 rewrites them as above).
TEST_CASE("array scripts: each task picks its values, command and run directory by its index") {
  std::filesystem::path dir = std::filesystem::path(HPCLAUNCH_SOURCE_DIR) / "tests" / "golden";
  bool update = std::getenv("HPCLAUNCH_UPDATE_GOLDEN") != nullptr;
  const std::pair<const char*, LaunchMode> k_cases[] = {
      {"cc", LaunchMode::mpirun}, {"perlmutter", LaunchMode::srun}, {"polaris", LaunchMode::pals}, {"local", LaunchMode::agent}};
  for (const auto& [site, mode] : k_cases) {
    JobRequest r;
    r.site = site;
    r.nodes = 1;
    r.launcher = to_string(mode);
    const SiteProfile& p = sites().get(site);
    if (p.account.required) r.account = p.account.example;
    r.command = {"hpclaunch-train", "--lr", "{lr}", "--metrics", "{task_dir}/metrics.jsonl"};
    r.array.sweep = {{"lr", {"1e-3", "3e-3"}, "--sweep"}, {"note", {"it's", "a b"}, "--sweep"}};
    r.array.max_concurrent = 2;
    LaunchPlan plan = make_plan(r, p);
    RenderContext ctx = k_ctx;
    ctx.array_directives = {p.scheduler == Scheduler::slurm ? "--array=0-3%2" : "-J 0-3%2"};
    if (p.scheduler == Scheduler::local) ctx.array_directives.clear();
    std::string script = render_script(plan, ctx);
    auto path = dir / ("sweep--" + std::string(site) + "--" + to_string(mode) + ".sh");
    if (update) std::ofstream(path) << script;
    CAPTURE(path.string());
    REQUIRE(std::filesystem::exists(path));
    CHECK(read_file(path) == script);
    const std::string task2 = "  2) export HPCLAUNCH_SWEEP_LR=3e-3 HPCLAUNCH_SWEEP_NOTE='it'\\''s'; hpclaunch_command=(hpclaunch-train --lr "
                              "3e-3 --metrics /home/user/project/hpclaunch-jobs/train/tasks/2/metrics.jsonl --note 'it'\\''s') ;;\n";
    CHECK(script.find(task2) != std::string::npos);
    CHECK(script.find("export HPCLAUNCH_JOB_DIR=\"$HPCLAUNCH_ARRAY_DIR/tasks/$HPCLAUNCH_ARRAY_TASK\"\n") != std::string::npos);
    CHECK(script.find("export HPCLAUNCH_JOB_DIR=/") == std::string::npos);  // not the array's directory
    CHECK(script.find("-- \"${hpclaunch_command[@]}\"") != std::string::npos);
    if (p.scheduler == Scheduler::slurm) {
      CHECK(script.find("#SBATCH --output=/home/user/project/hpclaunch-jobs/train/tasks/%a/slurm-%A_%a.out\n#SBATCH --array=0-3%2\n") !=
            std::string::npos);
      CHECK(script.find("export HPCLAUNCH_ARRAY_TASK=\"$SLURM_ARRAY_TASK_ID\"\n") != std::string::npos);
    }
    if (p.scheduler == Scheduler::pbs) {
      CHECK(script.find("#PBS -o /home/user/project/hpclaunch-jobs/train/tasks/^array_index^/output.log\n#PBS -J 0-3%2\n") !=
            std::string::npos);
      CHECK(script.find("export HPCLAUNCH_ARRAY_TASK=\"$PBS_ARRAY_INDEX\"\n") != std::string::npos);
    }
    if (mode == LaunchMode::mpirun)  // mpirun passes on only what it is told to
      CHECK(script.find("-x HPCLAUNCH_ARRAY_TASK -x HPCLAUNCH_ARRAY_TASKS -x HPCLAUNCH_ARRAY_DIR -x HPCLAUNCH_JOB_DIR "
                        "-x HPCLAUNCH_SWEEP_LR -x HPCLAUNCH_SWEEP_NOTE") != std::string::npos);
  }
}

TEST_SUITE_END();

}  // namespace render_test

namespace render_test {

TEST_CASE("spares: the Slurm and local scripts start an agent on each node, say how many wait, keep the job when one "
          "is lost and take node 0's status") {
  int checked = 0;
  for (const char* site : {"perlmutter", "local"}) {
    CAPTURE(site);
    const SiteProfile& p = sites().get(site);
    REQUIRE(p.allows(LaunchMode::agent));
    JobRequest r;
    r.site = site;
    r.nodes = 2;
    r.spares = 1;
    r.launcher = "agent";
    r.command = {"python", "train.py"};
    if (p.account.required) r.account = p.account.example;
    const std::string s = render_script(make_plan(r, p), k_ctx);
    CHECK(s.find("agent --nnodes 2 --spares 1 --nproc-per-node") != std::string::npos);
    CHECK(s.find("; 2 node(s) x ") != std::string::npos);
    CHECK(s.find("\n# And 1 spare node(s), holding no workers: each takes the place of a node that is lost or hangs.\n") !=
          std::string::npos);
    CHECK(s.find(site == std::string("local") ? "local-srun --no-kill --nodes 3 " : "\nsrun --no-kill --nodes=3 ") !=
          std::string::npos);
    CHECK(s.find("[ -f \"$HPCLAUNCH_JOB_DIR/agent-exit\" ] && hpclaunch_rc=$(cat \"$HPCLAUNCH_JOB_DIR/agent-exit\")\n"
                 "exit \"$hpclaunch_rc\"\n") != std::string::npos);
    ++checked;
  }
  CHECK(checked == 2);
  JobRequest r;
  r.site = "perlmutter";
  r.spares = 1;
  r.launcher = "agent";
  r.command = {"python", "train.py"};
  r.signal = "USR1@120";
  r.requeue = true;
  const std::string s = render_script(make_plan(r, sites().get("perlmutter")), k_ctx);
  CHECK(s.find("#SBATCH --no-kill\n") != std::string::npos);
  // With a warning signal the status is taken after the wait, before the requeue's decisions read it.
  const auto taken = s.find("[ -f \"$HPCLAUNCH_JOB_DIR/agent-exit\" ] && hpclaunch_rc=");
  REQUIRE(taken != std::string::npos);
  CHECK(taken > s.find("wait \"$hpclaunch_launch\""));
  CHECK(taken < s.find("if [ \"$hpclaunch_rc\" -eq 93 ]"));
}

}  // namespace render_test
