// The accelerator's vendor: its visibility variables in a task's binding, the profiles that name it, the per-rank
// launch options and the network's settings of the 2026 sites.
#include <doctest/doctest.h>

#include <map>

#include "plan/plan.h"
#include "render/render.h"
#include "runtime/task_env.h"
#include "site/profile_yaml.h"
#include "site/registry.h"
#include "test_util.h"
#include "util/error.h"
#include "util/strings.h"

namespace site_accelerator_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

namespace {

TaskEnvEffects no_effects() {
  return {[](const std::string& path) -> std::string { throw Error(path, "no files in this test"); },
          [](const std::string& host) -> std::optional<std::string> { return host; }};
}

std::map<std::string, std::string> vars_of(const Env& env) {
  TaskEnv t = compute_task_env(env, {}, no_effects());
  return {t.vars.begin(), t.vars.end()};
}

// Task 2 of a one-node Slurm step of 4 tasks.
Env slurm_task(int local_rank) {
  return {{"SLURM_JOB_ID", "77"},          {"SLURM_STEP_ID", "0"},
          {"SLURM_PROCID", std::to_string(local_rank)}, {"SLURM_LOCALID", std::to_string(local_rank)},
          {"SLURM_NODEID", "0"},           {"SLURM_STEP_NUM_TASKS", "4"},
          {"SLURM_STEP_NUM_NODES", "1"},   {"SLURM_STEP_TASKS_PER_NODE", "4"},
          {"SLURM_STEP_NODELIST", "n1"},   {"SLURM_JOB_NODELIST", "n1"},
          {"HPCLAUNCH_GPU_BIND", "local-rank"}};
}

std::string load_error(const std::string& text) {
  return test::error_of_call(
      [&] { read_profiles({"t.yaml", text}, [](const std::string&) { return nullptr; }, scheduler_checks()); });
}

JobRequest request(const std::string& site, int nodes) {
  JobRequest r;
  r.site = site;
  r.nodes = nodes;
  r.account = test::sites().get(site).account.example;
  r.command = {"python", "train.py"};
  return r;
}

std::string script(const JobRequest& r) {
  return render_script(make_plan(r, test::sites().get(r.site)), {"/opt/bin/hpclaunch", "/home/u/p", "/home/u/p/jobs/j"});
}

}  // namespace

TEST_SUITE_BEGIN("site_accelerator");

TEST_CASE("an AMD task is bound through ROCR_VISIBLE_DEVICES, and HIP's own numbering is reset to its one device") {
  Env env = slurm_task(2);
  env["HPCLAUNCH_ACCELERATOR"] = "amd";
  env["ROCR_VISIBLE_DEVICES"] = "4,5,6,7";  // what Slurm's GPU plugin gives the node's tasks on AMD
  env["HIP_VISIBLE_DEVICES"] = "0,1,2,3";
  auto v = vars_of(env);
  CHECK(v["ROCR_VISIBLE_DEVICES"] == "6");
  CHECK(v["HIP_VISIBLE_DEVICES"] == "0");   // "2" inherited would hide the one device ROCR leaves
  CHECK(v["CUDA_VISIBLE_DEVICES"] == "0");  // HIP honours it too
  CHECK(v["LOCAL_RANK"] == "0");
  CHECK(v["HPCLAUNCH_NODE_LOCAL_RANK"] == "2");
  // Slurm's own list (SLURM_STEP_GPUS) serves when no ROCm variable lists the devices.
  env.erase("ROCR_VISIBLE_DEVICES");
  env.erase("HIP_VISIBLE_DEVICES");
  env["SLURM_STEP_GPUS"] = "0,1,2,3";
  CHECK(vars_of(env)["ROCR_VISIBLE_DEVICES"] == "2");
}

TEST_CASE("an NVIDIA task is bound through CUDA_VISIBLE_DEVICES alone") {
  Env env = slurm_task(1);
  env["CUDA_VISIBLE_DEVICES"] = "0,1,2,3";
  auto v = vars_of(env);
  CHECK(v["CUDA_VISIBLE_DEVICES"] == "1");
  CHECK(v.count("ROCR_VISIBLE_DEVICES") == 0);
  CHECK(v.count("HIP_VISIBLE_DEVICES") == 0);
}

TEST_CASE("an Intel task under PALS gets ZE_AFFINITY_MASK: its local rank where no list names the devices") {
  Env env = {{"PBS_JOBID", "9.aurora"},   {"PALS_RANKID", "13"},      {"PALS_LOCAL_RANKID", "1"},
             {"PALS_NODEID", "1"},         {"PALS_LOCAL_SIZE", "12"},  {"PMI_SIZE", "24"},
             {"HPCLAUNCH_GPU_BIND", "local-rank"}, {"HPCLAUNCH_ACCELERATOR", "intel"},
             {"HPCLAUNCH_MASTER_ADDR_RULE", "fixed"}, {"HPCLAUNCH_MASTER_ADDR_FIXED", "x1"}};
  auto v = vars_of(env);
  CHECK(v["ZE_AFFINITY_MASK"] == "1");
  CHECK(v["LOCAL_RANK"] == "0");
  CHECK(v.count("CUDA_VISIBLE_DEVICES") == 0);
  env["ZE_AFFINITY_MASK"] = "0.0,0.1";  // COMPOSITE hierarchy: card.tile entries are passed as written
  CHECK(vars_of(env)["ZE_AFFINITY_MASK"] == "0.1");
}

TEST_CASE("where Slurm bound each task's GPU itself, LOCAL_RANK does not index devices the task cannot see") {
  // srun --gpus-per-task=1 --gpu-bind=closest (Frontier, Alps, DeltaAI): local rank 3 sees its one GCD as device 0.
  // Before, LOCAL_RANK stayed 3, and torch.cuda.set_device(3) failed on a task with one device.
  Env env = slurm_task(3);
  env["HPCLAUNCH_ACCELERATOR"] = "amd";
  env["ROCR_VISIBLE_DEVICES"] = "5";
  env["SLURMD_TRES_BIND"] = "gpu:per_task:1";
  TaskEnv t = compute_task_env(env, {}, no_effects());
  std::map<std::string, std::string> v(t.vars.begin(), t.vars.end());
  CHECK(v["LOCAL_RANK"] == "0");
  CHECK(v["HPCLAUNCH_NODE_LOCAL_RANK"] == "3");
  CHECK(v.count("ROCR_VISIBLE_DEVICES") == 0);  // Slurm's binding is kept, not renumbered
  REQUIRE(t.notes.size() == 1);
  CHECK(t.notes[0].find("ROCR_VISIBLE_DEVICES=5 kept") != std::string::npos);
}

TEST_CASE("where Slurm's per-task binding left a task several devices, the task still takes its own") {
  // Found by t0213 on the test cluster: `srun --gpus-per-task=1 --gpu-bind=closest` on nodes whose GPUs name no
  // cores gave both tasks ROCR_VISIBLE_DEVICES=2,3; with LOCAL_RANK 0 both used device 2.
  for (int local : {0, 1}) {
    Env env = slurm_task(local);
    env["HPCLAUNCH_ACCELERATOR"] = "amd";
    env["ROCR_VISIBLE_DEVICES"] = "2,3";
    env["SLURMD_TRES_BIND"] = "gpu:closest";
    auto v = vars_of(env);
    CHECK(v["ROCR_VISIBLE_DEVICES"] == std::to_string(2 + local));
    CHECK(v["LOCAL_RANK"] == "0");
  }
}

TEST_CASE("the agent's workers can be given their device in the vendor's variables (worker_device_env)") {
  using Pairs = std::vector<std::pair<std::string, std::string>>;
  CHECK(worker_device_env({{"CUDA_VISIBLE_DEVICES", "4,5,6,7"}}, 1) == Pairs{{"CUDA_VISIBLE_DEVICES", "5"}});
  CHECK(worker_device_env({{"HPCLAUNCH_ACCELERATOR", "amd"}, {"ROCR_VISIBLE_DEVICES", "0,1"}}, 1) ==
        Pairs{{"ROCR_VISIBLE_DEVICES", "1"}, {"HIP_VISIBLE_DEVICES", "0"}, {"CUDA_VISIBLE_DEVICES", "0"}});
  CHECK(worker_device_env({{"HPCLAUNCH_ACCELERATOR", "intel"}}, 11) == Pairs{{"ZE_AFFINITY_MASK", "11"}});
  CHECK(test::error_of_call([] { worker_device_env({{"CUDA_VISIBLE_DEVICES", "0"}}, 1); })
            .find("--virtual-local-rank: local rank 1 but CUDA_VISIBLE_DEVICES lists 1 device(s)") == 0);
}

TEST_CASE("an unknown HPCLAUNCH_ACCELERATOR is one line naming the variable") {
  Env env = slurm_task(0);
  env["HPCLAUNCH_ACCELERATOR"] = "amdd";
  CHECK(test::error_of_call([&] { vars_of(env); }).find("HPCLAUNCH_ACCELERATOR: unknown accelerator 'amdd' (did you mean 'amd'?)") == 0);
}

TEST_CASE("every built-in profile's default launch lets a seed script pick its GPU by LOCAL_RANK") {
  // The invariant behind Sockeye's old bug: a task that saw one GPU while LOCAL_RANK stayed 1-3. For every profile
  // and its default launch, local rank 2 of a 4-GPU node must get a LOCAL_RANK its visible devices have.
  for (const SiteProfile* p : test::sites().all()) {
    CAPTURE(p->name);
    if (p->default_launcher == LaunchMode::agent || p->node.gpus < 4) continue;  // the agent sets it (its own tests)
    const DeviceVisibility& vis = device_visibility(p->node.accelerator);
    Env env = slurm_task(2);
    env["HPCLAUNCH_GPU_BIND"] = to_string(p->gpu_bind);
    env["HPCLAUNCH_ACCELERATOR"] = to_string(p->node.accelerator);
    bool slurm_binds = false;
    for (const auto& o : p->scheduler_option("rank_options")) slurm_binds |= o.rfind("--gpus-per-task", 0) == 0;
    env[vis.list_variables.front()] = slurm_binds ? "2" : "0,1,2,3";
    if (slurm_binds) env["SLURMD_TRES_BIND"] = "gpu:per_task:1";
    auto v = vars_of(env);
    std::string visible = v.count(vis.bind_variable) ? v[vis.bind_variable] : env[vis.list_variables.front()];
    int devices = static_cast<int>(split(visible, ',').size());
    CHECK(std::stoi(v["LOCAL_RANK"]) < devices);
  }
}

TEST_CASE("a profile that cannot work is refused when it loads, with file:line") {
  std::string slurm = "name: p\nscheduler: slurm\nnode: {gpus: 4, cores: 8}\n";
  CHECK(load_error(slurm + "launch: {default: srun, allowed: [srun]}\nenv: {ROCR_VISIBLE_DEVICES: '0'}\n") ==
        "t.yaml:1:1: env: ROCR_VISIBLE_DEVICES is amd's, but node.accelerator is nvidia; remove it, or write "
        "`node: {accelerator: amd}`");
  CHECK(load_error("name: p\nscheduler: slurm\nnode: {gpus: 4, cores: 8, accelerator: amd}\nlaunch: {default: srun, "
                   "allowed: [srun]}\nenv: {CUDA_VISIBLE_DEVICES: '0'}\n")
            .find("CUDA_VISIBLE_DEVICES is nvidia's, but node.accelerator is amd") != std::string::npos);
  // A scheduler's own block (slurm:, pbs:), checked against the keys its dialect declares.
  const std::string pbs = "name: p\nscheduler: pbs\nnode: {gpus: 4, cores: 8}\n";
  CHECK(load_error(slurm + "launch: {default: agent, allowed: [agent]}\nslurm: {rank_options: [--gpu-bind=closest]}\n") ==
        "t.yaml:5:23: slurm.rank_options: given, but the site allows no srun launch (its scheduler is slurm); "
        "remove it, or allow srun");
  CHECK(load_error(pbs + "launch: {default: mpirun, allowed: [mpirun]}\npbs: {pals_cpu_bind: 'list:1-2'}\n")
            .find("t.yaml:5:22: pbs.pals_cpu_bind: given, but the site allows no pals launch") == 0);
  CHECK(load_error(slurm + "launch: {default: srun, allowed: [srun]}\nslurm: {rank_options: [-c7]}\n")
            .find("t.yaml:5:23: slurm.rank_options: '-c7' sets the geometry") == 0);
  CHECK(load_error(slurm + "launch: {default: srun, allowed: [srun]}\nslurm: {rank_options: ['--gpu-bind=closest; rm']}\n")
            .find("is not one srun option") != std::string::npos);
  CHECK(load_error(pbs + "launch: {default: pals, allowed: [pals]}\npbs: {pals_cpu_bind: 'depth'}\n")
            .find("t.yaml:5:22: pbs.pals_cpu_bind: 'depth' is not a PALS CPU list") == 0);
  CHECK(load_error(slurm + "launch: {default: srun, allowed: [srun]}\nslurm: {rank_option: [-x]}\n") ==
        "t.yaml:5:22: slurm.rank_option: not an option of slurm; remove it or use one of: rank_options, "
        "whole_node_rank_options");
  CHECK(load_error(slurm + "launch: {default: srun, allowed: [srun]}\nslurm: {rank_options: --gpu-bind=closest}\n") ==
        "t.yaml:5:23: slurm.rank_options: expected a list; write `rank_options: [VALUE, ...]`");
  CHECK(load_error(slurm + "launch: {default: srun, allowed: [srun]}\npbs: {chunk_extra: x}\n") ==
        "t.yaml:5:6: pbs: options of pbs, but the scheduler is slurm; rename the block `slurm:`, or remove it");
  CHECK(load_error("name: f\nscheduler: flux\nnode: {gpus: 4, cores: 8}\nlaunch: {default: flux, allowed: [flux]}\n"
                   "flux: {x: 1}\n") ==
        "t.yaml:5:11: flux.x: not an option of flux; remove it: flux has no options of its own");
  CHECK(load_error(slurm + "launch: {default: srun, allowed: [srun]}\nenv: {NCCL_NET_PLUGIN: ofi}\n"
                           "interconnect: {never_set: [{name: NCCL_NET_PLUGIN, reason: breaks the uenv}]}\n") ==
        "t.yaml:1:1: env: NCCL_NET_PLUGIN is set, but the site says not to: breaks the uenv; remove it");
  CHECK(load_error(slurm + "launch: {default: srun, allowed: [srun]}\ninterconnect: {env: [{name: NCCL_NET, value: x}]}\n")
            .find("interconnect.env[]: missing field 'source'") != std::string::npos);
}

TEST_CASE("per-rank CPU sets are checked against the ranks of a node") {
  JobRequest r = request("lumi-g", 2);
  CHECK_NOTHROW(make_plan(r, test::sites().get("lumi-g")));
  // A job's own geometry cannot outgrow the site's list: 8 masks for LUMI's 8 GCDs. A site file with 4 masks
  // (extends lumi-g) cannot place 8 ranks.
  auto ps = read_profiles({"mine.yaml", "name: mine\nextends: lumi-g\nslurm: {rank_options: "
                                        "['--cpu-bind=mask_cpu:0xfe,0xfe00,0xfe0000,0xfe000000']}\n"},
                          [](const std::string& n) { return &test::sites().get(n); }, scheduler_checks());
  r.site = "mine";
  CHECK(test::error_of_call([&] { make_plan(r, ps.front()); }).find(
            "--gpus-per-node: mine's per-rank CPU binding '--cpu-bind=mask_cpu:0xfe,0xfe00,0xfe0000,0xfe000000' has 4 "
            "CPU set(s) for the 8 ranks of a node; use --gpus-per-node 4 or fewer") == 0);
  r.gpus_per_node = 4;
  CHECK_NOTHROW(make_plan(r, ps.front()));
  JobRequest a = request("aurora", 1);
  CHECK(make_plan(a, test::sites().get("aurora")).ntasks_per_node == 12);
}

TEST_CASE("the per-rank options and PALS's CPU list are in the launch line") {
  std::string frontier = script(request("frontier", 2));
  CHECK(frontier.find("--cpus-per-task=7 --gpus-per-task=1 --gpu-bind=closest \\\n  \"$HPCLAUNCH\" exec") != std::string::npos);
  CHECK(frontier.find("export HPCLAUNCH_ACCELERATOR=amd\n") != std::string::npos);
  CHECK(frontier.find("export MIOPEN_USER_DB_PATH=\"/tmp/${USER}-miopen-cache-${SLURM_JOB_ID}\"\n") != std::string::npos);
  std::string aurora = script(request("aurora", 2));
  CHECK(aurora.find("mpiexec -n 24 --ppn 12 --cpu-bind=list:4-7:8-11:12-15:16-19:20-23:24-27:56-59:60-63:64-67:68-71:72-75:76-79 \\\n") != std::string::npos);
  CHECK(aurora.find("export HPCLAUNCH_ACCELERATOR=intel\n") != std::string::npos);
  CHECK(aurora.find("export HPCLAUNCH_MASTER_ADDR_SUFFIX=.hsn.cm.aurora.alcf.anl.gov\n") != std::string::npos);
  CHECK(aurora.find("export CCL_PROCESS_LAUNCHER=pmix\n") != std::string::npos);
  // The agent's single task per node gets none of a rank's options.
  JobRequest agent = request("frontier", 2);
  agent.launcher = "agent";
  CHECK(script(agent).find("--gpus-per-task") == std::string::npos);
}

TEST_CASE("a network's documented settings are exported unless set, and what the site forbids is refused") {
  std::string s = script(request("alps-clariden", 2));
  CHECK(s.find("[ -n \"${NCCL_NET+set}\" ] || export NCCL_NET='AWS Libfabric'\n") != std::string::npos);
  CHECK(s.find("[ -n \"${FI_MR_CACHE_MONITOR+set}\" ] || export FI_MR_CACHE_MONITOR=userfaultfd\n") != std::string::npos);
  CHECK(s.find("NCCL_NET_PLUGIN") == std::string::npos);
  JobRequest r = request("alps-clariden", 1);
  r.env = {"NCCL_NET_PLUGIN=ofi"};
  CHECK(test::error_of_call([&] { make_plan(r, test::sites().get("alps-clariden")); }).find(
            "--env: NCCL_NET_PLUGIN must not be set on alps-clariden: setting NCCL_NET_PLUGIN=ofi with a uenv breaks") == 0);
  // --env of a network variable is the job's own: it replaces the site's line instead of yielding to it.
  r.env = {"NCCL_NET_GDR_LEVEL=SYS"};
  std::string own = script(r);
  CHECK(own.find("export NCCL_NET_GDR_LEVEL=SYS\n") != std::string::npos);
  CHECK(own.find("${NCCL_NET_GDR_LEVEL+set}") == std::string::npos);
}

TEST_CASE("sites show writes the accelerator, the rank options and the network with their sources") {
  std::string yaml = profile_to_yaml(test::sites().get("lumi-g"));
  CHECK(yaml.find("accelerator: amd") != std::string::npos);
  CHECK(yaml.find("whole_node_rank_options: [\"--cpu-bind=verbose,mask_cpu:") != std::string::npos);
  CHECK(yaml.find("{name: NCCL_NET_GDR_LEVEL, value: 3, source: lumi-userguide") != std::string::npos);
  auto back = read_profiles({"shown.yaml", yaml}, [](const std::string&) { return nullptr; }, scheduler_checks());
  CHECK(profile_to_yaml(back.front()) == yaml);
  std::string aurora = profile_to_yaml(test::sites().get("aurora"));
  CHECK(profile_to_yaml(read_profiles({"a.yaml", aurora}, [](const std::string&) { return nullptr; }).front()) == aurora);
}

TEST_SUITE_END();

TEST_SUITE_BEGIN("site_container");

TEST_CASE("Alps's container engine: an EDF in the job directory, named by srun --environment on every step") {
  JobRequest r = request("alps-clariden", 2);
  r.container = "/capstor/store/cscs/u/ngc-pytorch.sqsh";
  std::string s = script(r);
  CHECK(s.find("cat >/home/u/p/jobs/j/container.toml <<'HPCLAUNCH_EDF'\n"
               "image = \"/capstor/store/cscs/u/ngc-pytorch.sqsh\"\n"
               "mounts = [\"/opt/bin:/opt/bin\", \"/home/u/p:/home/u/p\", \"/home/u/p/jobs/j:/home/u/p/jobs/j\"]\n"
               "workdir = \"/home/u/p\"\n[annotations]\n") != std::string::npos);
  // The hook's variant the docs recommend for any image (the 2026-11 audit: a numbered one must match its CUDA).
  CHECK(s.find("com.hooks.aws_ofi_nccl.variant = \"cuda-dl\"\n") != std::string::npos);
  CHECK(s.find("--gpus-per-task=1 '--environment=/home/u/p/jobs/j/container.toml' \\\n  \"$HPCLAUNCH\" exec -- python train.py\n") !=
        std::string::npos);
  CHECK(s.find("#SBATCH --environment") == std::string::npos);  // "experimental" as a directive: srun only
  r.launcher = "agent";
  CHECK(script(r).find("--ntasks-per-node=1 --cpus-per-task=288 '--environment=/home/u/p/jobs/j/container.toml' \\\n") !=
        std::string::npos);
  CHECK(script(request("alps-clariden", 2)).find("container.toml") == std::string::npos);  // no --container: none
}

TEST_CASE("Alps's uenv is given as two directives, and NCCL_NET_PLUGIN stays refused with it") {
  JobRequest r = request("alps-clariden-uenv", 1);
  r.container = "pytorch/v2.8.0:/user-environment";
  std::string s = script(r);
  CHECK(s.find("#SBATCH --uenv=pytorch/v2.8.0:/user-environment\n#SBATCH --view=default\n") != std::string::npos);
  CHECK(s.find("export TRITON_HOME=/dev/shm/\n") != std::string::npos);
  CHECK(s.find("container.toml") == std::string::npos);
  r.env = {"NCCL_NET_PLUGIN=ofi"};
  CHECK(test::error_of_call([&] { make_plan(r, test::sites().get("alps-clariden-uenv")); }).find("--env: NCCL_NET_PLUGIN") == 0);
}

TEST_CASE("Pyxis is srun --container-image=, from a site file") {
  auto ps = read_profiles({"pyxis.yaml", "name: mine\nextends: jupiter\ncontainer: {runtime: pyxis, srun_options: "
                                         "['--container-image={image}', '--container-mounts={hpclaunch_dir},{workdir}']}\n"},
                          [](const std::string& n) { return &test::sites().get(n); }, scheduler_checks());
  JobRequest r = request("jupiter", 1);
  r.container = "nvcr.io#nvidia/pytorch:26.02-py3";
  std::string s = render_script(make_plan(r, ps.front()), {"/opt/bin/hpclaunch", "/home/u/p", "/home/u/p/jobs/j"});
  CHECK(s.find(" '--container-image=nvcr.io#nvidia/pytorch:26.02-py3' '--container-mounts=/opt/bin,/home/u/p' \\\n  "
               "\"$HPCLAUNCH\" exec -- python train.py\n") != std::string::npos);
}

TEST_CASE("Apptainer gets the vendor's GPU flag: --rocm on AMD, --nv on NVIDIA") {
  JobRequest r = request("frontier", 1);
  r.container = "pytorch.sif";
  CHECK(make_plan(r, test::sites().get("frontier")).command ==
        std::vector<std::string>{"apptainer", "exec", "--rocm", "pytorch.sif", "python", "train.py"});
  r = request("lumi-g", 1);
  r.container = "lumi.sif";
  CHECK(make_plan(r, test::sites().get("lumi-g")).command.at(2) == "--rocm");
}

TEST_CASE("a container form the scheduler or the launcher cannot run is refused") {
  CHECK(load_error("name: p\nscheduler: pbs\nnode: {gpus: 4, cores: 8}\nlaunch: {default: pals, allowed: [pals]}\n"
                   "container: {runtime: pyxis, srun_options: ['--container-image={image}']}\n")
            .find("t.yaml:1:1: container.srun_options: the scheduler is pbs, whose jobs start no srun steps") == 0);
  CHECK(load_error("name: p\nscheduler: slurm\nnode: {gpus: 4, cores: 8}\nlaunch: {default: srun, allowed: [srun]}\n"
                   "container: {runtime: x, edf: ['image = \"{image}\"']}\n")
            .find("container.edf: an EDF file that no srun option names") != std::string::npos);
  auto ps = read_profiles({"p.yaml", "name: mine\nextends: vista\ncontainer: {runtime: pyxis, srun_options: "
                                     "['--container-image={image}']}\n"},
                          [](const std::string& n) { return &test::sites().get(n); }, scheduler_checks());
  JobRequest r = request("vista", 1);
  r.container = "img";
  r.launcher = "mpirun";
  CHECK(test::error_of_call([&] { make_plan(r, ps.front()); }).find("--container: mine runs containers as options of srun steps") == 0);
}

TEST_SUITE_END();

TEST_SUITE_BEGIN("site_facts_2026");

TEST_CASE("time limits that grow with the node count: Frontier's batch and Aurora's prod routing") {
  JobRequest r = request("frontier", 91);
  r.time = "06:00:00";
  CHECK(test::error_of_call([&] { make_plan(r, test::sites().get("frontier")); })
            .find("--time: 06:00:00 is more than the 02:00:00 limit of batch for 91 node(s) on frontier") == 0);
  r.nodes = 92;
  CHECK(make_plan(r, test::sites().get("frontier")).time_s == 6 * 3600);
  r.nodes = 184;
  r.time = "12:00:00";
  CHECK(make_plan(r, test::sites().get("frontier")).time_s == 12 * 3600);
  // Aurora: capacity (the default) takes up to 16 nodes; 300 nodes go to prod, 12 h up to 1024 nodes.
  JobRequest a = request("aurora", 300);
  a.time = "12:00:00";
  LaunchPlan p = make_plan(a, test::sites().get("aurora"));
  CHECK(p.partition == "prod");
  a.time = "18:00:00";
  CHECK(test::error_of_call([&] { make_plan(a, test::sites().get("aurora")); }).find("for 300 node(s) on aurora") !=
        std::string::npos);
  a.nodes = 1100;
  CHECK(make_plan(a, test::sites().get("aurora")).time_s == 18 * 3600);
  a.nodes = 40;  // between capacity's 16 and prod's 256: debug-scaling, 1 h
  a.time = "";
  CHECK(make_plan(a, test::sites().get("aurora")).partition == "debug-scaling");
}

TEST_CASE("the Alliance's PAICE accounts (aip-) look like cc accounts") {
  JobRequest r = request("cc", 1);
  r.account = "aip-someprof";
  CHECK(make_plan(r, test::sites().get("cc")).warnings.empty());
  r.account = "xyz-someprof";
  CHECK_FALSE(make_plan(r, test::sites().get("cc")).warnings.empty());
}

TEST_SUITE_END();

}  // namespace site_accelerator_test
