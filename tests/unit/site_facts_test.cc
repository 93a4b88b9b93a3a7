// Facts about the built-in sites that a first real job depends on (issue 9), each checked against the site's own
// documentation (the source is in the profile): the queue a job lands in, the memory it asks for, the account.
#include <doctest/doctest.h>

#include "plan/plan.h"
#include "render/render.h"
#include "site/registry.h"
#include "test_util.h"

using namespace hpclaunch;

namespace {

const SiteRegistry& sites() {
  static const SiteRegistry reg = builtin_sites();
  return reg;
}

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

TEST_CASE("Alliance: every cc profile asks for memory; a full-node job takes the node's") {
  for (const char* site : {"cc", "cc-fir", "cc-narval", "cc-rorqual", "cc-nibi", "cc-trillium"}) {
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

TEST_CASE("every built-in profile's default launch lets a seed script pick its GPU by LOCAL_RANK") {
  // With local-rank binding by default, a task saw one GPU while LOCAL_RANK stayed 0-3 (Sockeye's old default):
  // torch.cuda.set_device(local_rank) failed on local ranks 1-3.
  for (const SiteProfile* p : sites().all()) {
    CAPTURE(p->name);
    CHECK(p->gpu_bind == GpuBind::none);
  }
}

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

// NCI Gadi (opus.nci.org.au: queue structure, job costs): gpuvolta asks the job's totals, ncpus = 12 x ngpus,
// the node's 382 GB shared by its 4 GPUs, and the project named with -P.
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
  CHECK(script(two).find(",ncpus=24,ngpus=2,mem=191GB\n") != std::string::npos);

  std::string whole = script(request("gadi", 2, "ab01"));  // two whole nodes
  CHECK(whole.find(",ncpus=96,ngpus=8,mem=764GB\n") != std::string::npos);
}

TEST_CASE("Gadi: a job needs a project; one that does not look like a project code is sent with a warning") {
  CHECK(test::error_of_call([] { plan(request("gadi", 1)); }).find("--account") != std::string::npos);
  LaunchPlan odd = plan(request("gadi", 1, "AB-01"));
  CHECK(odd.account == "AB-01");
  CHECK(has_warning(odd, "does not look like a gadi account"));
  CHECK_FALSE(has_warning(plan(request("gadi", 1, "ab01")), "does not look like"));
}

TEST_SUITE_END();
