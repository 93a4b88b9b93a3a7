// Facts about the built-in sites that a first real job depends on, each checked against the site's own
// documentation (the source is in the profile): the queue a job lands in, the memory it asks for, the account.
#include <doctest/doctest.h>

#include "plan/plan.h"
#include "site/profile_yaml.h"
#include "submit/binary_arch.h"
#include "submit/task_jobs.h"
#include "render/render.h"
#include "site/registry.h"
#include "test_util.h"

namespace site_facts_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

namespace {

using test::sites;

JobRequest request(const std::string& site, int nodes, const std::string& account = "") {
  JobRequest r;
  r.site = site;
  r.nodes = nodes;
  r.account = account;
  r.command = {"python", "train.py"};
  return r;
}

LaunchPlan plan(const JobRequest& r) { return make_plan(r, sites().get(r.site)); }

std::string script(const JobRequest& r) {
  return render_script(plan(r), {"/opt/bin/hpclaunch", "/home/u/p", "/home/u/p/hpclaunch-jobs/train"});
}

bool has_warning(const LaunchPlan& p, const std::string& part) {
  for (const auto& w : p.warnings)
    if (w.find(part) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_SUITE_BEGIN("site_facts");

TEST_CASE("Roihu: one full node fits gpumedium; two full nodes go to gpularge, which says it needs the scalability test") {
  LaunchPlan one = plan(request("roihu", 1, "project_2001234"));
  CHECK(one.partition == "gpumedium");
  LaunchPlan two = plan(request("roihu", 2, "project_2001234"));
  CHECK(two.partition == "gpularge");  // gpumedium allows 4 GPUs per job, not 8
  CHECK(has_warning(two, "scalability test"));
  JobRequest small = request("roihu", 2, "project_2001234");
  small.gpus_per_node = 2;
  CHECK(plan(small).partition == "gpumedium");  // 4 GPUs in all
  JobRequest asked = request("roihu", 2, "project_2001234");
  asked.partition = "gpumedium";
  CHECK(test::error_of_call([&] { plan(asked); }).find("--partition: gpumedium takes at most 4 GPUs per job") == 0);
  JobRequest test2 = request("roihu", 2, "project_2001234");
  test2.partition = "gputest";
  test2.gpus_per_node = 1;
  CHECK(plan(test2).partition == "gputest");  // gputest takes 1-2 nodes
  CHECK(plan(request("roihu", 1, "project_2001234")).time_s <= 36 * 3600);
}

TEST_CASE("Roihu: python-pytorch, $TMPDIR, memory set by the GPUs") {
  const SiteProfile& roihu = sites().get("roihu");
  CHECK(roihu.modules == std::vector<std::string>{"python-pytorch"});
  CHECK(roihu.scratch == std::vector<std::string>{"TMPDIR"});
  CHECK(roihu.node.memory_gb == 4 * 217);
  std::string s = script(request("roihu", 1, "project_2001234"));
  CHECK(s.find("--mem") == std::string::npos);
  CHECK(s.find("module load python-pytorch") != std::string::npos);
}

TEST_CASE("Mahti and Puhti are retired with Roihu as the successor; sockeye-pbs is retired for sockeye") {
  const SiteProfile& mahti = sites().get("mahti");
  CHECK(mahti.retired());
  CHECK(mahti.retired_on == "2026-08-31");
  CHECK(mahti.successors == std::vector<std::string>{"roihu"});
  CHECK(sites().get("puhti").successors == std::vector<std::string>{"roihu"});
  CHECK(sites().get("sockeye-pbs").retired());
  CHECK(sites().get("sockeye-pbs").successors == std::vector<std::string>{"sockeye"});
}

// Trillium ignores memory requests: it is not among them.
TEST_CASE("Alliance: every cc profile asks for memory; a full-node job takes the node's") {
  for (const char* site : {"cc", "cc-fir", "cc-narval", "cc-rorqual", "cc-nibi"}) {
    CAPTURE(site);
    std::string s = script(request(site, 2, "def-someprof"));
    CHECK(s.find("#SBATCH --mem") != std::string::npos);
  }
  CHECK(script(request("cc", 2, "def-someprof")).find("#SBATCH --mem=0\n") != std::string::npos);
  JobRequest one_gpu = request("cc", 1, "def-someprof");
  one_gpu.gpus_per_node = 1;
  CHECK(script(one_gpu).find("#SBATCH --mem-per-gpu=281G\n") != std::string::npos);  // 1125 GB / 4 GPUs
}

TEST_CASE("Perlmutter: the command users type first renders; an account of another form only warns") {
  LaunchPlan p = plan(request("perlmutter", 2));
  CHECK(p.account.empty());  // the scheduler charges the default project
  LaunchPlan staff = plan(request("perlmutter", 2, "nstaff"));  // the NERSC seed's own account
  CHECK(staff.account == "nstaff");
  CHECK(has_warning(staff, "does not look like a perlmutter account"));
  JobRequest with_default = request("perlmutter", 2);
  with_default.default_account = "m1234_g";
  CHECK(has_warning(plan(with_default), "charged to your default account m1234_g"));
  CHECK(plan(request("perlmutter", 2)).time_s <= 48 * 3600);
}

TEST_CASE("a site that requires an account takes the user's default one, and refuses without any") {
  JobRequest r = request("roihu", 1);
  CHECK(test::error_of_call([&] { plan(r); }).find("--account: roihu requires an account") == 0);
  r.default_account = "project_2009999";
  CHECK(plan(r).account == "project_2009999");
}

TEST_CASE("unverified facts are listed with the profile") {
  CHECK_FALSE(sites().get("perlmutter").unverified.empty());
}

TEST_SUITE_END();

TEST_SUITE_BEGIN("site_facts");

// "every built-in profile's default launch lets a seed script pick its GPU by LOCAL_RANK": site_accelerator_test.cc,
// which now checks what each rank is told rather than that no profile binds.

TEST_SUITE_END();

TEST_SUITE_BEGIN("site_facts");

TEST_CASE("Narvi: the 32 GiB V100s the profile names need --constraint=gpumem_32 (teslav100 covers 16 GiB cards too)") {
  std::string s = script(request("narvi", 1));
  CHECK(s.find("#SBATCH --gres=gpu:teslav100:4\n") != std::string::npos);
  CHECK(s.find("#SBATCH --constraint=gpumem_32\n") != std::string::npos);
  CHECK_FALSE(sites().get("narvi").unverified.empty());
}

TEST_SUITE_END();

TEST_SUITE_BEGIN("site_facts");

TEST_CASE("Trillium: GPUs per node 1 or 4, StdEnv and openmpi for mpirun, job directories under $SCRATCH") {
  JobRequest two = request("cc-trillium", 1, "def-someprof");
  two.gpus_per_node = 2;
  CHECK(test::error_of_call([&] { plan(two); }) ==
        "--gpus-per-node: 2 GPUs of a node cannot be asked for on cc-trillium; use --gpus-per-node 1 or 4");
  two.gpus_per_node = 1;
  CHECK(plan(two).gpus_per_node == 1);
  JobRequest mpi = request("cc-trillium", 2, "def-someprof");
  mpi.launcher = "mpirun";
  std::string s = script(mpi);
  CHECK(s.find("module load StdEnv openmpi") != std::string::npos);
  const SiteProfile& t = sites().get("cc-trillium");
  CHECK(check_job_dir_location(t, "/scratch/u/job", "/scratch/u").empty());
  CHECK(test::error_of_call([&] { check_job_dir_location(t, "/home/u/job", "/scratch/u"); })
            .find("--job-dir: /home/u/job is outside $SCRATCH (/scratch/u)") == 0);
  CHECK(check_job_dir_location(t, "/home/u/job", "").find("which is not set here") != std::string::npos);
  CHECK(check_job_dir_location(sites().get("perlmutter"), "/home/u/job", "").empty());  // any directory will do there
}

TEST_SUITE_END();

TEST_SUITE_BEGIN("site_facts");

// NCI Gadi (opus.nci.org.au: queue structure, job costs): gpuvolta asks the job's totals, ncpus = 12 x ngpus, a
// node's 380 GB (NCI's example asks 760GB for 2 nodes) shared by its 4 GPUs, and the project named with -P.
TEST_CASE("Gadi: a job asks its totals with ncpus = 12 x ngpus, mem in proportion, and -P names the project") {
  JobRequest one = request("gadi", 1, "ab01");
  one.gpus_per_node = 1;
  std::string s = script(one);
  CHECK(s.find("#PBS -l walltime=01:00:00,ncpus=12,ngpus=1,mem=95GB\n") != std::string::npos);
  CHECK(s.find("#PBS -P ab01\n") != std::string::npos);
  CHECK(s.find("#PBS -A") == std::string::npos);
  CHECK(s.find("select=") == std::string::npos);
  CHECK(s.find("#PBS -q gpuvolta\n") != std::string::npos);

  JobRequest two = request("gadi", 1, "ab01");
  two.gpus_per_node = 2;
  CHECK(script(two).find(",ncpus=24,ngpus=2,mem=190GB\n") != std::string::npos);

  std::string whole = script(request("gadi", 2, "ab01"));  // two whole nodes
  CHECK(whole.find(",ncpus=96,ngpus=8,mem=760GB\n") != std::string::npos);
}

TEST_CASE("Gadi: a job needs a project; one that does not look like a project code is sent with a warning") {
  CHECK(test::error_of_call([] { plan(request("gadi", 1)); }).find("--account") != std::string::npos);
  LaunchPlan odd = plan(request("gadi", 1, "AB-01"));
  CHECK(odd.account == "AB-01");
  CHECK(has_warning(odd, "does not look like a gadi account"));
  CHECK_FALSE(has_warning(plan(request("gadi", 1, "ab01")), "does not look like"));
}

TEST_SUITE_END();

// An audit of the profiles against the sites' own pages (2026-11; the sources are in the profiles).
namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const RenderContext k_ctx = {"/opt/bin/hpclaunch", "/home/u/p", "/home/u/p/hpclaunch-jobs/train", {}};

// The first bytes of a 64-bit little-endian ELF file for machine `em`.
std::string elf_header(unsigned em) {
  std::string h = std::string("\x7f" "ELF", 4) + '\x02' + '\x01' + std::string(12, '\0');
  h += static_cast<char>(em & 0xff);
  h += static_cast<char>(em >> 8);
  return h + std::string(44, '\0');
}

}  // namespace

TEST_SUITE_BEGIN("site_audit");

TEST_CASE("Gadi: mpirun places G ranks on each node, however $PBS_NODEFILE counts slots") {
  // NCI's nodefile lists a host once per CPU: by slots, all 8 ranks of a 2-node job would land on the first node.
  std::string s = script(request("gadi", 2, "ab01"));
  CHECK(has(s, "mpirun -np 8 --tag-output --hostfile \"$PBS_NODEFILE\" --map-by ppr:4:node --oversubscribe"));
  CHECK_FALSE(has(s, "-map-by :OVERSUBSCRIBE"));
  JobRequest two = request("gadi", 3, "ab01");
  two.gpus_per_node = 2;
  CHECK(has(script(two), "mpirun -np 6 --tag-output --hostfile \"$PBS_NODEFILE\" --map-by ppr:2:node"));
}

TEST_CASE("Gadi: -l storage= names the project's scratch and gdata, says so, and a site file changes it") {
  std::string s = script(request("gadi", 1, "ab01"));
  CHECK(has(s, "#PBS -l storage=scratch/ab01+gdata/ab01+gdata/dk92\n"));
  CHECK(has(s, "# '-l storage=scratch/ab01+gdata/ab01+gdata/dk92' is made from the account ab01: to change it, "
               "put your own '-l storage=...' in the `directives:` of a site file (--site-file) that extends gadi.\n"));
  SiteProfile mine = sites().get("gadi");
  mine.directives = {"-l storage=gdata/xy12+scratch/ab01"};
  std::string own = render_script(make_plan(request("gadi", 1, "ab01"), mine), k_ctx);
  CHECK(has(own, "#PBS -l storage=gdata/xy12+scratch/ab01\n"));
  CHECK_FALSE(has(own, "scratch/ab01+gdata/ab01"));
  CHECK_FALSE(has(own, "is made from the account"));
}

TEST_CASE("Gadi: no PBS job arrays; a sweep is one job per task, chained for --max-concurrent") {
  JobRequest r = request("gadi", 1, "ab01");
  r.array.sweep = {parse_sweep_flag("lr=0.1,0.2,0.3")};
  r.array.max_concurrent = 2;
  LaunchPlan p = plan(r);
  CHECK(has_warning(p, "gadi refuses job arrays: submit sends each of the 3 tasks as a job of its own"));
  const std::string dir = "/scratch/ab01/u/jobs/train";
  std::string all = render_task_jobs(p, dir, k_ctx);
  CHECK_FALSE(has(all, "#PBS -J"));
  CHECK_FALSE(has(all, "PBS_ARRAY_INDEX"));
  CHECK(has(all, "# /scratch/ab01/u/jobs/train/tasks/0/job.sh\n#!/bin/bash\n"));
  CHECK(has(all, "# /scratch/ab01/u/jobs/train/tasks/2/job.sh (submitted after task 0's job, to start once it ends)\n"));
  LaunchPlan t1 = task_plan(p, 1, dir + "/tasks/1");
  CHECK_FALSE(t1.array.active());
  CHECK(t1.job_name == p.job_name + "-1");
  CHECK(t1.command == std::vector<std::string>{"python", "train.py", "--lr", "0.2"});
  std::string one = render_script(t1, {"/opt/bin/hpclaunch", "/home/u/p", dir + "/tasks/1", {}});
  CHECK(has(one, "export HPCLAUNCH_SWEEP_LR=0.2\n"));
  // Its place in the sweep, as an array task's script exports it (docs/sweeps.md, "Its environment").
  CHECK(has(one, "export HPCLAUNCH_ARRAY_TASK=1\nexport HPCLAUNCH_ARRAY_TASKS=3\nexport HPCLAUNCH_ARRAY_DIR=" + dir + "\n"));
  CHECK(has(one, "export HPCLAUNCH_JOB_DIR=/scratch/ab01/u/jobs/train/tasks/1\n"));
  CHECK(has(one, "#PBS -N " + p.job_name + "-1\n"));
  CHECK_FALSE(task_waits_for(0, 2));
  CHECK_FALSE(task_waits_for(1, 2));
  CHECK(task_waits_for(2, 2) == size_t{0});
  CHECK(task_waits_for(5, 2) == size_t{3});
  CHECK_FALSE(task_waits_for(7, 0));  // no limit: all at once
  // A site that takes arrays keeps the scheduler's own (Sockeye's PBS form).
  CHECK(sites().get("sockeye-pbs").arrays);
}

TEST_CASE("Trillium: say before submitting that GPU jobs go from the GPU login node, and >5 nodes need an allocation") {
  LaunchPlan one = plan(request("cc-trillium", 1, "def-someprof"));
  CHECK(has_warning(one, "cc-trillium: GPU jobs are submitted from Trillium's GPU login node"));
  CHECK_FALSE(has_warning(one, "more than 5 GPU nodes"));
  CHECK(has_warning(plan(request("cc-trillium", 6, "def-someprof")), "more than 5 GPU nodes need a resource allocation"));
  CHECK_FALSE(has_warning(plan(request("cc-fir", 6, "def-someprof")), "login node"));
}

TEST_CASE("Roihu: an hpclaunch built for x86_64 is refused for its aarch64 GPU nodes, in one line") {
  CHECK(sites().get("roihu").node.arch == "aarch64");
  CHECK(elf_arch(elf_header(62)) == "x86_64");
  CHECK(elf_arch(elf_header(183)) == "aarch64");
  CHECK(elf_arch("#!/bin/sh\n") == "");
  CHECK(arch_mismatch(sites().get("roihu"), "x86_64", "/usr/bin/hpclaunch") ==
        "this hpclaunch (/usr/bin/hpclaunch) is built for x86_64, but roihu's compute nodes are aarch64: the job script "
        "runs it there, so every task would fail to start");
  CHECK(arch_mismatch(sites().get("roihu"), "aarch64", "/x").empty());
  CHECK(arch_mismatch(sites().get("perlmutter"), "x86_64", "/x").empty());
  CHECK(arch_mismatch(sites().get("roihu"), "", "/x").empty());  // not an ELF file: nothing known, nothing said
  CHECK(has_warning(plan(request("roihu", 1, "project_2001234")), "roihu-gpu"));
}

TEST_CASE("Polaris: prod's time limit by node count, the capacity queue, GPUs in ALCF's reverse order") {
  JobRequest small = request("polaris", 10, "MyProject");
  small.partition = "prod";
  small.time = "06:00:00";
  CHECK(test::error_of_call([&] { plan(small); }) ==
        "--time: 06:00:00 is more than the 03:00:00 limit of prod for 10 node(s) on polaris; use --time 03:00:00 or "
        "less, or another partition");
  small.nodes = 25;
  CHECK(plan(small).time_s == 6 * 3600);
  small.time = "12:00:00";
  CHECK(test::error_of_call([&] { plan(small); }).find("06:00:00 limit of prod for 25 node(s)") != std::string::npos);
  small.nodes = 100;
  CHECK(plan(small).time_s == 12 * 3600);

  JobRequest cap = request("polaris", 4, "MyProject");
  cap.partition = "capacity";
  cap.time = "100:00:00";
  CHECK(plan(cap).time_s == 100 * 3600);
  cap.nodes = 5;
  CHECK(test::error_of_call([&] { plan(cap); }).find("--nodes: 5 is more than the 4 nodes capacity allows") == 0);

  std::string s = script(request("polaris", 2, "MyProject"));
  CHECK(has(s, "export CUDA_VISIBLE_DEVICES=3,2,1,0\n"));  // set_affinity_gpu_polaris.sh: GPU 3 next to CPUs 0-7
  CHECK(has(s, "mpiexec -n 8 --ppn 4 --depth 8 --cpu-bind depth"));  // ranks on cores 0-7, 8-15, ...: not on SMT siblings
}

TEST_CASE("Derecho: develop's chunk asks mem= (a GPU's share of its node's 487 GB), main's none") {
  JobRequest dev = request("derecho", 1, "NCAR0001");
  dev.partition = "develop";
  dev.gpus_per_node = 2;
  std::string s = script(dev);
  CHECK(has(s, "#PBS -l walltime=01:00:00,select=1:ncpus=32:ngpus=2:mpiprocs=2:mem=243GB\n"));
  CHECK(has(s, "#PBS -q develop\n"));
  dev.gpus_per_node = 4;
  CHECK(has(script(dev), ":mpiprocs=4:mem=487GB\n"));
  std::string main = script(request("derecho", 2, "NCAR0001"));
  CHECK(has(main, "select=2:ncpus=64:ngpus=4:mpiprocs=4\n"));
}

TEST_CASE("Narvi refuses a job of more than 12 GPUs; Nibi asks its GPUs' share of 2000G; Sockeye asks memory") {
  CHECK(test::error_of_call([] { plan(request("narvi", 4)); }) ==
        "--partition: gpu takes at most 12 GPUs per job; this job asks 16 (4 node(s) x 4); use another partition "
        "(`hpclaunch sites show narvi`), or change --nodes/--gpus-per-node");
  CHECK(plan(request("narvi", 3)).gpus_per_node == 4);

  JobRequest nibi = request("cc-nibi", 1, "def-someprof");
  nibi.gpus_per_node = 2;
  CHECK(plan(nibi).memory == "--mem-per-gpu=250G");

  CHECK(plan(request("sockeye", 2, "st-someprof-1-gpu")).memory == "--mem=0");
  JobRequest part = request("sockeye", 1, "st-someprof-1-gpu");
  part.gpus_per_node = 1;
  CHECK(plan(part).memory == "--mem-per-gpu=46G");
}

TEST_CASE("every built-in profile of a real site says how a job asks for memory (docs/site-profiles.md)") {
  for (const SiteProfile* p : sites().all()) {
    if (p->scheduler == Scheduler::local) continue;
    CAPTURE(p->name);
    CHECK(p->memory.style != MemoryStyle::unset);
  }
}

TEST_CASE("`sites show NAME` lists every fact the profile marks unverified") {
  int with = 0;
  for (const SiteProfile* p : sites().all()) {
    CAPTURE(p->name);
    std::string shown = profile_to_yaml(*p);
    for (const auto& fact : p->unverified) CHECK(has(shown, fact.substr(0, 40)));
    with += !p->unverified.empty();
  }
  CHECK(with > 5);
  CHECK_FALSE(sites().get("gadi").unverified.empty());
}

TEST_SUITE_END();

// Facts a first job fails on, re-checked against each site's own page (2026-11; the URL is in the profile).
TEST_SUITE_BEGIN("site_recheck");

namespace {

// The facts `sites show NAME` lists as unverified, as the user reads them.
std::string unverified_of(const std::string& site) {
  std::string all;
  for (const auto& fact : sites().get(site).unverified) all += fact + "\n";
  return all;
}

}  // namespace

TEST_CASE("Derecho: PyTorch from the conda environment NCAR's scripts make, cuda loaded; not npl (no ML packages)") {
  std::string s = script(request("derecho", 2, "NCAR0001"));
  // ncar-hpc-docs job scripts: GPU jobs load the cuda module "or nodes may lock up".
  CHECK(has(s, "module load conda cuda\n"));
  // ncar-hpc-docs conda page: NPL "does not currently contain GPU or machine learning packages".
  CHECK_FALSE(has(s, "conda activate npl"));
  // NCAR/aiml_gpu_ncar_envs pytorch/setup_conda_pytorch.sh names its environment ptXXXgpu_conda (2.2.0: pt220).
  CHECK(has(s, "conda activate pt220gpu_conda || {"));
  CHECK(has(s, "# PyTorch: the conda environment pt220gpu_conda, made once on a login node with NCAR's\n"));
  LaunchPlan p = plan(request("derecho", 1, "NCAR0001"));
  CHECK(has_warning(p, "derecho: the job activates the conda environment pt220gpu_conda"));
  CHECK(has_warning(p, "github.com/NCAR/aiml_gpu_ncar_envs"));
  CHECK_FALSE(has(unverified_of("derecho"), "npl"));
}

TEST_CASE("Derecho: develop's GPU nodes give 487 GB, preempt runs 100 h, GPU jobs need a project with GPU hours") {
  JobRequest dev = request("derecho", 1, "NCAR0001");
  dev.partition = "develop";
  dev.gpus_per_node = 2;
  CHECK(has(script(dev), ":mpiprocs=2:mem=243GB\n"));  // a GPU share of 487 GB, not of the CPU nodes' 235 GB
  dev.gpus_per_node = 4;
  CHECK(has(script(dev), ":mpiprocs=4:mem=487GB\n"));

  JobRequest pre = request("derecho", 2, "NCAR0001");
  pre.partition = "preempt";
  pre.time = "100:00:00";
  CHECK(plan(pre).time_s == 100 * 3600);
  pre.time = "101:00:00";
  CHECK(test::error_of_call([&] { plan(pre); }).find("more than the 4-04:00:00 limit of preempt") != std::string::npos);

  CHECK(has_warning(plan(request("derecho", 1, "NCAR0001")),
                    "derecho: GPU jobs are refused unless the project (-A) has an allocation of GPU hours"));
  const std::string u = unverified_of("derecho");
  CHECK_FALSE(has(u, "512 GB"));  // NCAR's Derecho page: 64 cores, 512 GB and 4 A100 40 GB per GPU node
}

TEST_CASE("Gadi: -l storage names gdata/dk92, where NCI's PyTorch environment lives, and the script loads it") {
  std::string s = script(request("gadi", 2, "ab01"));
  CHECK(has(s, "#PBS -l storage=scratch/ab01+gdata/ab01+gdata/dk92\n"));
  CHECK(has(s, "module use /g/data/dk92/apps/Modules/modulefiles\nmodule load NCI-ai-ml\n"));
}

TEST_CASE("Gadi: two gpuvolta nodes ask 760GB, as NCI's own example, not 764GB") {
  CHECK(has(script(request("gadi", 2, "ab01")), ",ncpus=96,ngpus=8,mem=760GB\n"));
  JobRequest one = request("gadi", 1, "ab01");
  one.gpus_per_node = 2;
  CHECK(has(script(one), ",ncpus=24,ngpus=2,mem=190GB\n"));
}

TEST_CASE("Narvi: the gpu partition needs the GPU group, asked for by email; the 12-GPU limit is confirmed") {
  CHECK(has_warning(plan(request("narvi", 1)), "narvi: the gpu partition is open only to members of the GPU group"));
  const std::string u = unverified_of("narvi");
  CHECK_FALSE(has(u, "12-GPU"));
  CHECK(has(u, "node.cores"));  // not in the docs: still marked
  CHECK(has(u, "node.memory_gb"));
}

TEST_CASE("Trillium: 768 GB nodes, and no memory request (Trillium ignores them), its notices confirmed") {
  const SiteProfile& t = sites().get("cc-trillium");
  CHECK(t.node.memory_gb == 768);
  for (int gpus : {1, 4}) {
    JobRequest r = request("cc-trillium", 1, "def-someprof");
    r.gpus_per_node = gpus;
    CAPTURE(gpus);
    CHECK_FALSE(has(script(r), "--mem"));
  }
  const std::string u = unverified_of("cc-trillium");
  CHECK_FALSE(has(u, "notices"));
  CHECK_FALSE(has(u, "node.memory_gb"));
}

TEST_CASE("Mahti: a GPU's share is 122.5 GiB (CSC), so a job on part of a node asks 122G a GPU, not 128G") {
  JobRequest one = request("mahti", 1, "project_2001234");
  one.gpus_per_node = 1;
  CHECK(plan(one).memory == "--mem-per-gpu=122G");
  JobRequest test1 = request("mahti", 2, "project_2001234");
  test1.partition = "gputest";
  CHECK(test::error_of_call([&] { plan(test1); }).find("--nodes: 2 is more than the 1 nodes gputest allows") == 0);
  CHECK_FALSE(has(unverified_of("mahti"), "node.memory_gb"));
}

TEST_CASE("Polaris: capacity queue, 512 GB nodes, PyTorch in the conda module, GPU 3 by CPUs 0-7: confirmed") {
  const std::string u = unverified_of("polaris");
  CHECK_FALSE(has(u, "capacity"));
  CHECK_FALSE(has(u, "512"));
  CHECK_FALSE(has(u, "carries PyTorch"));
  CHECK_FALSE(has(u, "GPU 3"));
  CHECK(has(u, "filesystems=home:eagle"));  // still marked
}

TEST_CASE("pages not readable here: Perlmutter's QOS limits, Sockeye's shape and Gadi's queue limits stay marked") {
  CHECK(has(unverified_of("perlmutter"), "queues.regular.max_time"));
  CHECK(has(unverified_of("juwels-booster"), "512 GB"));
  CHECK(has(unverified_of("sockeye"), "node.memory_gb"));
  CHECK(has(unverified_of("sockeye-pbs"), "node.memory_gb"));  // the same figure, now listed where `sites show` sees it
  CHECK(has(unverified_of("gadi"), "walltime"));
}

TEST_CASE("JUWELS Booster loads Stage 2025, which users' JUWELS scripts load; its PyTorch there stays marked") {
  // Stage 2024 (PyTorch 2.1.2) was confirmed from JSC's easyconfigs; Stage 2025 (PyTorch 2.5.1) is what interTwin's
  // JUWELS scripts load, but that JSC installed its PyTorch for the Booster was not seen.
  CHECK(has(unverified_of("juwels-booster"), "modules: Stages/2025"));
  CHECK(has(script(request("juwels-booster", 2, "training2324")),
            "module load Stages/2025 GCC OpenMPI Python PyTorch\n"));
}

TEST_SUITE_END();

TEST_SUITE_BEGIN("site_facts");

TEST_CASE("Aurora: the chunk asks whole nodes as ALCF's select=N does, never an ngpus PBS may not count") {
  // known-issues.md: a chunk asking more than a node has never runs; no Aurora page says whether its PBS counts 6
  // GPUs or 12 tiles, and its scripts ask none. The tiles still shape the launch: 12 ranks a node.
  std::string s = script(request("aurora", 2, "MyProject"));
  CHECK(s.find("#PBS -l walltime=01:00:00,select=2:ncpus=208:mpiprocs=12\n") != std::string::npos);
  CHECK(s.find("ngpus") == std::string::npos);
  CHECK(plan(request("aurora", 2, "MyProject")).ntasks == 24);
}

TEST_CASE("the PAICE AI clusters: aip- accounts, their node shapes, TamIA's whole nodes and day, Vulcan's week") {
  for (const char* site : {"cc-killarney", "cc-killarney-h100", "cc-tamia", "cc-vulcan"}) {
    CAPTURE(site);
    CHECK_FALSE(has_warning(plan(request(site, 1, "aip-someprof")), "does not look like"));
    CHECK(has_warning(plan(request(site, 1, "def-someprof")), "does not look like"));  // PAICE charges aip- only
    CHECK(sites().get(site).account.example == "aip-someprof");
  }
  CHECK(script(request("cc-killarney", 2, "aip-someprof")).find("--gpus-per-node=l40s:4") != std::string::npos);
  CHECK(script(request("cc-killarney-h100", 1, "aip-someprof")).find("--gpus-per-node=h100:8") != std::string::npos);
  CHECK(script(request("cc-vulcan", 1, "aip-someprof")).find("--gpus-per-node=l40s:4") != std::string::npos);
  JobRequest part = request("cc-tamia", 1, "aip-someprof");
  part.gpus_per_node = 2;
  CHECK(test::error_of_call([&] { plan(part); }).find("2 GPUs of a node cannot be asked for on cc-tamia") != std::string::npos);
  JobRequest week = request("cc-tamia", 1, "aip-someprof");
  week.time = "2-00:00:00";
  CHECK_FALSE(test::error_of_call([&] { plan(week); }).empty());
  week.site = "cc-vulcan";
  CHECK(plan(week).time_s == 2 * 86400);
  week.time = "8-00:00:00";
  CHECK_FALSE(test::error_of_call([&] { plan(week); }).empty());
  CHECK(has_warning(plan(request("cc-tamia", 1, "aip-someprof")), "each job must use all 4 GPUs"));
}

TEST_SUITE_END();

TEST_SUITE_BEGIN("site_facts_audit_2026_11");

// SITES-AUDIT-2026-11's WRONG facts, each failing on the profile as it stood before (the sources are in the profiles).

TEST_CASE("alps-clariden: an Alps Extended Image gets no NCCL hook, the cxi hook off, entrypoint, and srun's network and pmix") {
  for (const char* image : {"jfrog.svc.cscs.ch/docker-group-csstaff/alps-images/ngc-pytorch:26.02-py3-alps4",
                            "ghcr.io/eth-cscs/alps-extended-images/ngc-pytorch:26.02-py3-alps4"}) {
    JobRequest r = request("alps-clariden", 2, "g123");
    r.container = image;
    const std::string s = script(r);
    CAPTURE(image);
    CHECK(s.find("aws_ofi_nccl") == std::string::npos);
    CHECK(s.find("com.hooks.cxi.enabled = \"false\"\n") != std::string::npos);
    CHECK(s.find("entrypoint = true\n") != std::string::npos);
    CHECK(s.find(" '--network=disable_rdzv_get' '--mpi=pmix' \\\n") != std::string::npos);
  }
  JobRequest ngc = request("alps-clariden", 2, "g123");
  ngc.container = "/capstor/store/cscs/u/ngc-pytorch.sqsh";  // a plain NGC image: the hook, as pytorch.md says
  const std::string s = script(ngc);
  CHECK(s.find("com.hooks.aws_ofi_nccl.enabled = \"true\"\n") != std::string::npos);
  CHECK(s.find("disable_rdzv_get") == std::string::npos);
}

TEST_CASE("alps-clariden: a container job leaves the network's variables to the container; a uenv job exports them") {
  JobRequest ce = request("alps-clariden", 2, "g123");
  ce.container = "/capstor/store/cscs/u/ngc-pytorch.sqsh";
  const std::string s = script(ce);
  CHECK(s.find("NCCL_CROSS_NIC") == std::string::npos);
  CHECK(s.find("container sets the network's NCCL and libfabric variables itself") != std::string::npos);
  CHECK(script(request("alps-clariden", 2, "g123")).find("export NCCL_CROSS_NIC=1") != std::string::npos);  // no container
  JobRequest uenv = request("alps-clariden-uenv", 2, "g123");
  uenv.container = "pytorch/v2.8.0:/user-environment";
  CHECK(script(uenv).find("export NCCL_CROSS_NIC=1") != std::string::npos);
}

TEST_CASE("lumi-g: the mask_cpu binding only on whole nodes (standard-g), not on small-g or dev-g") {
  JobRequest whole = request("lumi-g", 2, "project_462000229");
  CHECK(script(whole).find("mask_cpu:0x00fe000000000000") != std::string::npos);
  for (const char* shared : {"small-g", "dev-g"}) {
    JobRequest r = request("lumi-g", 1, "project_462000229");
    r.partition = shared;
    const std::string s = script(r);
    CAPTURE(shared);
    CHECK(s.find("mask_cpu") == std::string::npos);
    CHECK(s.find(std::string(shared) + " shares its nodes between jobs") != std::string::npos);
  }
}

TEST_CASE("deltaai: a GPU's memory share is 120e9 bytes in MiB (decimal GB), not 120G (GiB); a full node --mem=0") {
  JobRequest one = request("deltaai", 1, "bbka-dtai-gh");
  one.gpus_per_node = 1;
  const LaunchPlan p = plan(one);
  CHECK(p.memory == "--mem-per-gpu=114440M");
  CHECK(114440L * 1048576L <= 120000000000L);
  CHECK(plan(request("deltaai", 1, "bbka-dtai-gh")).memory == "--mem=0");
}

TEST_CASE("aurora: debug shares nodes, so the whole-node CPU list is left out there; capacity keeps it") {
  JobRequest debug = request("aurora", 1, "MyProject");
  debug.partition = "debug";
  const std::string s = script(debug);
  CHECK(s.find("--cpu-bind=list:") == std::string::npos);
  CHECK(s.find("debug shares its nodes between jobs") != std::string::npos);
  CHECK(script(request("aurora", 1, "MyProject")).find("--cpu-bind=list:4-7:8-11") != std::string::npos);
}

TEST_CASE("aurora: on debug's shared nodes a job is given no tiles of its own, so it binds by local rank only on whole nodes") {
  JobRequest part = request("aurora", 1, "MyProject");
  part.partition = "debug";
  part.gpus_per_node = 4;  // tiles 0-3 by local rank: another job on the node may hold them
  CHECK(test::error_of_call([&] { plan(part); }) ==
        "--gpus-per-node: debug shares its nodes between jobs and aurora asks the scheduler for no GPUs of a job's own "
        "(gpu_request: none), so binding 4 of a node's 12 by local rank could take another job's; use "
        "--gpus-per-node 12 (whole nodes), or another queue (`hpclaunch sites show aurora`)");
  part.gpus_per_node = 12;  // the whole node (ncpus=208): its tiles are the job's
  CHECK(plan(part).gpus_per_node == 12);
  part.partition = "capacity";  // exclusive nodes: 4 tiles of a node of its own
  part.gpus_per_node = 4;
  CHECK(plan(part).gpus_per_node == 4);
  // LUMI's shared small-g asks Slurm for GPUs (--gpus-per-node), which gives the job its own list to bind from.
  JobRequest lumi = request("lumi-g", 1, "project_462000229");
  lumi.partition = "small-g";
  lumi.gpus_per_node = 2;
  CHECK(plan(lumi).gpus_per_node == 2);
}

TEST_SUITE_END();

}  // namespace site_facts_test
