#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <string>

#include "dialect/dialect.h"
#include "site/profile_yaml.h"
#include "site/registry.h"
#include "util/error.h"
#include "util/strings.h"
#include "test_util.h"

namespace site_profile_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

namespace {

const char* k_minimal = R"(name: tiny
scheduler: slurm
node: {gpus: 2, cores: 8}
launch: {default: srun, allowed: [srun, agent]}
)";

std::string error_of(const std::string& text, const std::string& file = "t.yaml") {
  return test::error_of_call(
      [&] { read_profiles({file, text}, [](const std::string&) { return nullptr; }, scheduler_checks()); });
}


}  // namespace

TEST_SUITE_BEGIN("site_profile");

TEST_CASE("every built-in profile loads and the required sites are there") {
  SiteRegistry reg = builtin_sites();
  for (const char* name : {"perlmutter", "cc", "cc-fir", "cc-narval", "cc-rorqual", "cc-nibi", "cc-trillium",
                           "sockeye", "sockeye-pbs", "puhti", "mahti", "roihu", "narvi", "juwels-booster", "local"})
    CHECK_MESSAGE(reg.find(name) != nullptr, name);
}

TEST_CASE("built-in profiles carry the facts of SITES.md") {
  SiteRegistry reg = builtin_sites();
  const SiteProfile& pm = reg.get("perlmutter");
  CHECK(pm.scheduler == Scheduler::slurm);
  CHECK(pm.node.gpus == 4);
  CHECK(pm.gpu.style == GpuStyle::gpus_per_node);
  CHECK(pm.gpu.constraint == "gpu");
  CHECK_FALSE(pm.account.required);  // NERSC charges the default project when -A is absent (jobs/policy)
  CHECK(pm.find_queue("regular")->max_time_s == 48 * 3600);
  CHECK(pm.find_queue("debug")->max_time_s == 30 * 60);
  CHECK(pm.container.runtime == "shifter");

  const SiteProfile& cc = reg.get("cc");
  CHECK(cc.title.find("Fir") != std::string::npos);  // Cedar is closed
  CHECK(cc.gpu.max_cpus_per_gpu == 12);
  CHECK(reg.get("cc-narval").node.gpu_model == "A100-40GB");
  CHECK(reg.get("cc-rorqual").gpu.max_cpus_per_gpu == 16);
  CHECK(reg.get("cc-nibi").node.gpus == 8);
  CHECK(reg.get("cc-narval").account.pattern == cc.account.pattern);  // variants inherit

  const SiteProfile& pbs = reg.get("sockeye-pbs");
  CHECK(pbs.scheduler == Scheduler::pbs);
  CHECK(pbs.default_launcher == LaunchMode::mpirun);
  CHECK(pbs.scheduler_text("chunk_extra") == "mem=64gb:gpu_mem=32gb");
  CHECK(reg.get("sockeye").scheduler == Scheduler::slurm);
  CHECK(reg.get("sockeye").gpu.constraint == "gpu_mem_32");

  const SiteProfile& puhti = reg.get("puhti");
  CHECK(puhti.retired());
  CHECK(puhti.retired_on == "2026-07-31");
  CHECK(puhti.successors == std::vector<std::string>{"roihu"});
  CHECK(puhti.gpu.style == GpuStyle::gres);
  CHECK(puhti.gpu.type == "v100");
  CHECK(reg.get("roihu").node.arch == "aarch64");

  const SiteProfile& jw = reg.get("juwels-booster");
  CHECK(jw.rendezvous.suffix == "i");
  CHECK(jw.rendezvous.resolve);
  CHECK(jw.find_queue("develbooster")->max_nodes == 4);
  CHECK(reg.get("local").rendezvous.master_addr == MasterAddrRule::fixed);
}

TEST_CASE("a minimal profile gets the documented defaults") {
  auto ps = read_profiles({"t.yaml", k_minimal}, [](const std::string&) { return nullptr; });
  REQUIRE(ps.size() == 1);
  CHECK(ps[0].name == "tiny");
  CHECK(ps[0].status == "active");
  CHECK(ps[0].gpu.style == GpuStyle::none);
  CHECK(ps[0].rendezvous.master_addr == MasterAddrRule::first_node);
  CHECK(ps[0].file == "t.yaml");
}

// The top level's last keys: a block for each scheduler (its own options), from the registry, in name order.
std::string all_scheduler_blocks() {
  std::string out;
  for (const auto& [name, id] : scheduler_names()) out += ", " + name;
  return out;
}

TEST_CASE("a login_host that is no ssh target is refused with file:line (ssh would read '-o...' as an option)") {
  CHECK(error_of(std::string(k_minimal) + "login_host: \"-oProxyCommand=sh\"\n") ==
        "t.yaml:5:13: login_host: '-oProxyCommand=sh' is no ssh target: the host '-oProxyCommand=sh' starts with '-' "
        "(ssh would read an option); write [USER@]HOST[:PORT], e.g. `login_host: login.example.org`");
  CHECK(error_of(std::string(k_minimal) + "login_host: alice@login.example.org:2222\n") == "(no error)");
}

TEST_CASE("schema errors name file:line:column and the field") {
  CHECK(error_of(std::string(k_minimal) + "nodez: 3\n") ==
        "t.yaml:5:1: unknown key 'nodez' (did you mean 'node'?); remove it or use one of: name, title, status, retired_on, "
        "successors, extends, scheduler, scheduler_version, node, queues, gpu_request, account, modules, setup, container, env, launch, "
        "rendezvous, requeue, scratch, directives, sources, learned, submit_check, unverified, memory, scratch_only, variants, "
        "interconnect, account_directives, notices, arrays, snapshot, snapshot_exclude, snapshot_max_size, login_host" +
            all_scheduler_blocks());
  CHECK(error_of("name: x\nscheduler: slurm\nnode: {gpus: four, cores: 8}\nlaunch: {default: srun, allowed: [srun]}\n") ==
        "t.yaml:3:14: node.gpus: expected a whole number, got 'four'; write e.g. `gpus: 4`");
  CHECK(error_of("name: x\nnode: {gpus: 1, cores: 8}\nlaunch: {default: srun, allowed: [srun]}\n") ==
        "t.yaml:1:1: missing required field 'scheduler'; add e.g. `scheduler: slurm`");
  // The known names: the registry's, in name order (toy_scheduler_test.cc may have registered its own).
  CHECK(error_of("name: x\nscheduler: slurmm\nnode: {gpus: 1, cores: 8}\nlaunch: {default: srun, allowed: [srun]}\n") ==
        "t.yaml:2:12: scheduler: 'slurmm' is not allowed (did you mean 'slurm'?); use one of: " +
            join(names_of(scheduler_names()), ", "));
  CHECK(error_of("name: x\nscheduler: slurm\nnode: {gpus: 1}\nlaunch: {default: srun, allowed: [srun]}\n") ==
        "t.yaml:3:7: node: missing required field 'node.cores'; add it");
  CHECK(error_of("scheduler: slurm\n") == "t.yaml:1:1: missing required field 'name'; add `name: mysite`");
  CHECK(error_of("name: x\n  bad: [\n") .rfind("t.yaml:2:", 0) == 0);  // YAML syntax errors keep their position
  CHECK(error_of("- a\n- b\n") == "t.yaml:1:1: a site profile must be a mapping; start with `name: mysite`");
}

TEST_CASE("a GPU request style its scheduler does not write is refused where the profile names it") {
  // Unchecked, a Slurm profile asking pbs-select rendered an empty #SBATCH line, and the job got no GPUs.
  const std::string slurm = k_minimal;
  CHECK(error_of(slurm + "gpu_request: {style: pbs-select}\n") ==
        "t.yaml:5:22: gpu_request.style: slurm writes no pbs-select request (it writes gpus-per-node, gres or none); "
        "change gpu_request.style, or the scheduler");
  const std::string pbs = "name: p\nscheduler: pbs\nnode: {gpus: 1, cores: 8}\nlaunch: {default: mpirun, allowed: [mpirun]}\n";
  CHECK(error_of(pbs + "gpu_request: {style: gres}\n") ==
        "t.yaml:5:22: gpu_request.style: pbs writes no gres request (it writes pbs-select, pbs-totals or none); "
        "change gpu_request.style, or the scheduler");
  // A variant that changes the scheduler under a style it inherits: named at the variant.
  CHECK(error_of(slurm + "gpu_request: {style: gres}\nvariants: {v: {scheduler: pbs, launch: {default: agent, allowed: [agent]}}}\n") ==
        "t.yaml:6:15: gpu_request.style: pbs writes no gres request (it writes pbs-select, pbs-totals or none); "
        "change gpu_request.style, or the scheduler");
  CHECK(error_of(slurm + "gpu_request: {style: gres}\n") == "(no error)");
  CHECK(error_of(pbs + "gpu_request: {style: pbs-totals}\n") == "(no error)");
  CHECK(error_of(pbs + "gpu_request: {style: none}\n") == "(no error)");  // none asks nothing: every scheduler takes it
  // Read without the check (a layer that knows no scheduler), the same profile reads.
  CHECK(read_profiles({"t.yaml", slurm + "gpu_request: {style: pbs-select}\n"}, [](const std::string&) { return nullptr; })
            .size() == 1);
}

TEST_CASE("value errors are caught where they are") {
  std::string base = k_minimal;
  CHECK(error_of(base + "env: {1X: y}\n").find("t.yaml:5:7: env: '1X' is not a variable name") == 0);
  CHECK(error_of(base + "queues: [{name: q, max_time: soon}]\n") ==
        "t.yaml:5:30: queues[].max_time: 'soon' is not a time limit; use MM, HH:MM:SS, D-HH or D-HH:MM:SS");
  CHECK(error_of(base + "queues: [{kind: qos}]\n") == "t.yaml:5:10: queues[]: missing field 'name'; give every queue a name");
  CHECK(error_of(base + "queues: [{name: a, default: true}, {name: b, default: true}]\n").find("more than one queue is the default") != std::string::npos);
  CHECK(error_of(base + "account: {pattern: '(['}\n").find("t.yaml:5:20: account.pattern: not a valid regular expression") == 0);
  CHECK(error_of(base + "rendezvous: {master_addr: fixed}\n").find("rendezvous.address: master_addr is 'fixed' but no address") != std::string::npos);
  CHECK(error_of(base + "rendezvous: {port: 80}\n") == "t.yaml:5:20: rendezvous.port: 80 is out of range 1024..65535; fix the value");
  CHECK(error_of(base + "status: retired\n") == "t.yaml:1:1: successors: a retired site must name its successors; add `successors: [NAME]`");
  CHECK(error_of("name: p\nscheduler: pbs\nnode: {gpus: 1, cores: 8}\nlaunch: {default: srun, allowed: [srun]}\n") ==
        "t.yaml:1:1: launch.allowed: " + launcher_needs(LaunchMode::srun) +
            " but the scheduler is pbs; drop srun from launch.allowed");
  CHECK(error_of("name: p\nscheduler: slurm\nnode: {gpus: 1, cores: 8}\nlaunch: {default: pals, allowed: [pals]}\n") ==
        "t.yaml:1:1: launch.allowed: pals needs pbs but the scheduler is slurm; drop pals from launch.allowed");
  // The check is the dialects': read without it (a layer that knows no scheduler), the same profile reads.
  CHECK(read_profiles({"t.yaml", "name: p\nscheduler: pbs\nnode: {gpus: 1, cores: 8}\nlaunch: {default: srun, allowed: [srun]}\n"},
                      [](const std::string&) { return nullptr; })
            .size() == 1);
  CHECK_NOTHROW(builtin_sites(scheduler_checks()));  // every built-in profile names launchers and a GPU style its
                                                     // scheduler takes
  CHECK(error_of("name: x\nscheduler: slurm\nnode: {gpus: 1, cores: 8}\nlaunch: {default: mpirun, allowed: [srun]}\n") ==
        "t.yaml:4:9: launch.default: 'mpirun' is not in launch.allowed; add it to allowed or pick another default");
  CHECK(error_of(base + "modules: pytorch\n") == "t.yaml:5:10: modules: expected a list; write it as `modules: [a, b]`");
  CHECK(error_of(base + "variants: {v2: {name: y}}\n").find("a variant is named by its key") != std::string::npos);
  CHECK(error_of(base + "variants: {v2: {variants: {}}}\n").find("unknown key 'variants'") != std::string::npos);
  CHECK(error_of("name: Bad Name\nscheduler: slurm\n").find("'Bad Name' is not a valid site name") != std::string::npos);
}

TEST_CASE("a node or launch that is no mapping is an error naming file:line, not yaml-cpp's exception") {
  // Found by fuzz/site_profile.cc: `node: 4` reached node["gpus"] on a scalar (YAML::BadSubscript, exit 1,
  // no file name).
  CHECK(error_of("name: x\nscheduler: slurm\nnode: 4\nlaunch: {default: srun, allowed: [srun]}\n") ==
        "t.yaml:3:7: node: expected a mapping of keys to values; see docs/site-profiles.md");
  CHECK(error_of("name: x\nscheduler: slurm\nnode: {gpus: 1, cores: 2}\nlaunch: srun\n") ==
        "t.yaml:4:9: launch: expected a mapping of keys to values; see docs/site-profiles.md");
}

TEST_CASE("what `sites show` writes of a profile reads back: variant names are checked, no carriage return") {
  // Found by fuzz/site_profile.cc (its round trip): a variant key was taken as a site name unchecked, and a
  // carriage return inside quotes was written back unquoted, where it reads as a line end.
  std::string base = k_minimal;
  CHECK(error_of(base + "variants: {'Big One': {}}\n") ==
        "t.yaml:5:12: variants: 'Big One' is not a valid site name; use lower-case letters, digits, '-', '.', '_'");
  CHECK(error_of(base + "variants: {[a]: {}}\n") == "t.yaml:5:12: variants: expected a single value; write it as `variants: VALUE`");
  CHECK(test::error_of_call([&] { read_header({"t.yaml", base + "variants: {'x y': {}}\n"}); })
            .find("t.yaml:5:12: variants: 'x y' is not a valid site name") == 0);
  // yaml-cpp 0.7 (Debian 12) keeps a carriage return inside double quotes: refused. 0.8 (Debian 13, t0515's root)
  // folds it into a space, as YAML's line folding says, so no carriage return is ever read there.
  const bool yaml_keeps_cr = YAML::Load("t: \"a\r\"")["t"].Scalar().find('\r') != std::string::npos;
  CHECK(error_of(base + "title: \"GPU\r\"\n") ==
        (yaml_keeps_cr ? "t.yaml:5:8: title: holds a carriage return inside quotes; remove it (save the file with Unix line ends)"
                       : "(no error)"));
}

TEST_CASE("extends builds on another profile, in any file order, and cycles are refused") {
  SiteRegistry reg = builtin_sites();
  reg.add({{"mine.yaml", "name: my-pm\nextends: perlmutter\naccount: {required: false}\nnode: {gpus: 4, cores: 64, memory_gb: 512}\n"}});
  const SiteProfile& p = reg.get("my-pm");
  CHECK(p.node.memory_gb == 512);
  CHECK(p.gpu.constraint == "gpu");
  CHECK_FALSE(p.account.required);
  CHECK(p.file == "mine.yaml");

  SiteRegistry two;  // b comes first but builds on a
  two.add({{"b.yaml", "name: b\nextends: tiny\nnode: {gpus: 1, cores: 8}\n"}, {"a.yaml", k_minimal}});
  CHECK(two.get("b").node.gpus == 1);
  CHECK(two.get("b").launchers.size() == 2);
}

TEST_CASE("extends of an unknown profile and extends cycles are errors") {
  SiteRegistry reg;
  CHECK_THROWS_WITH(reg.add({{"b.yaml", "name: b\nextends: nosuch\n"}}),
                    "b.yaml:2:10: extends: no site profile named 'nosuch'; run `hpclaunch sites` for the names");
  SiteRegistry cyc;
  CHECK_THROWS_WITH(cyc.add({{"a.yaml", "name: a\nextends: b\n"}, {"b.yaml", "name: b\nextends: a\n"}}),
                    "a.yaml: `extends: b` forms a cycle; make one of these profiles stand alone");
}

TEST_CASE("a later document of the same name replaces the earlier one (user overrides)") {
  SiteRegistry reg = builtin_sites();
  reg.add({{"override.yaml", "name: perlmutter\nextends: perlmutter\nmodules: [pytorch/2.3.1]\n"}});
  CHECK(reg.get("perlmutter").modules == std::vector<std::string>{"pytorch/2.3.1"});
  CHECK(reg.get("perlmutter").file == "override.yaml");
}

TEST_CASE("unknown sites get did-you-mean") {
  SiteRegistry reg = builtin_sites();
  CHECK_THROWS_WITH(reg.get("perlmuter"),
                    "--site: unknown site 'perlmuter' (did you mean 'perlmutter'?); run `hpclaunch sites` for the list, "
                    "or add one with --site-file");
}

TEST_CASE("sites show prints YAML that reads back to the same profile") {
  SiteRegistry reg = builtin_sites();
  for (const SiteProfile* p : reg.all()) {
    std::string yaml = profile_to_yaml(*p);
    auto back = read_profiles({"shown.yaml", yaml}, [](const std::string&) { return nullptr; });
    REQUIRE(back.size() == 1);
    CHECK_MESSAGE(profile_to_yaml(back[0]) == yaml, p->name);
  }
}

// Every key of every section, none at its default, as `sites show` writes them: what it reads is written back the same.
const char* k_every_key = R"(name: full
title: Every key
status: retired
retired_on: 2026-07-31
successors: [other]
scheduler: slurm
node:
  gpus: 4
  gpu_model: MI250X
  cores: 64
  threads_per_core: 2
  memory_gb: 512
  arch: aarch64
  accelerator: amd
queues:
  - {name: gpu, kind: qos, max_time: 1-00:00:00, max_nodes: 100, max_gpus: 8, min_gpus: 1, default: true, note: a note, max_time_by_nodes: {10: 03:00:00, 25: 06:00:00}, memory_gb: 64}
gpu_request:
  style: gres
  type: mi250x
  constraint: gpu
  max_cpus_per_gpu: 16
  gpus_per_node: [1, 4]
account:
  required: true
  pattern: "[a-z]+"
  flag: -P
  example: abc
modules: [rocm]
setup:
  - export A=1
container:
  runtime: pyxis
  directives: [d]
  wrap: [w]
  modules: [m]
  srun_options: ["--environment={edf}"]
  edf:
    - "[env]"
env:
  NCCL_A: 1
launch:
  default: srun
  allowed: [srun, agent, pals]
  gpu_bind: local-rank
  mpirun_modules: [openmpi]
rendezvous:
  master_addr: fixed
  suffix: i
  resolve: true
  address: 10.0.0.1
  port: 29500
requeue: {enabled: true, signal: USR2@60, max_requeues: 5, hang_timeout: 900}
scratch: [SCRATCH]
directives: [--mem=0]
account_directives: ["-l storage={account}"]
arrays: false
notices:
  - {text: hi, min_nodes: 6}
sources:
  - https://example.org
memory: {request: per-gpu, amount: 64G}
unverified:
  - a fact
scratch_only: true
interconnect:
  name: slingshot
  busbw_gbs: 20
  nvlink_busbw_gbs: 300
  source: s
  env:
    - {name: NCCL_X, value: 1, source: u}
  never_set:
    - {name: NCCL_NET_PLUGIN, reason: r}
submit_check: true
login_host: alice@login.example.org
learned:
  date: 2026-01-01
  commands:
    - sinfo
slurm:
  rank_options: [--gpu-bind=closest]
  whole_node_rank_options: [--cpu-bind=mask_cpu:0xf]
)";

TEST_CASE("a profile that sets every key is written back as it was read, key for key") {
  // Read without the scheduler's checks: pals and srun are no pair one scheduler takes.
  auto ps = read_profiles({"every.yaml", k_every_key}, [](const std::string&) { return nullptr; });
  REQUIRE(ps.size() == 1);
  CHECK(profile_to_yaml(ps[0]) == k_every_key);
}

TEST_SUITE_END();

}  // namespace site_profile_test
