// The scheduler seam, proved with a scheduler that exists only in this file: its dialect (what it says: directives,
// array syntax, task ids, the launchers it starts and the GPU styles it writes), its in-job face, its backend (which
// runs its commands, here through a fake command runner), its template, and a launcher (`toyrun`) and a GPU request
// style (`toy-gpus`) of its own. Its one registry line (`toy()`, as a line of site/schedulers.def, launchers.def and
// gpu_styles.def is for a built-in one) is all it adds outside itself: a site profile then names `scheduler: toy`,
// `launch.allowed: [toyrun]` and `gpu_request.style: toy-gpus`, `submit` plans, renders and submits through the
// toy's backend, job.json names it, status and cancel find its backend by that name, and a toy job's environment is
// read by its face, whose node list may come from a command. Nothing else in hpclaunch knows it.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>

#include "dialect/dialect.h"
#include "record/job_record.h"
#include "render/render.h"
#include "runtime/ranks.h"
#include "runtime/task_env.h"
#include "scheduler/backend.h"
#include "site/registry.h"
#include "submit/job_index.h"
#include "submit/submit_job.h"
#include "submit/submit_request.h"
#include "test_util.h"
#include "util/error.h"
#include "util/file.h"
#include "util/strings.h"

namespace toy_scheduler_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;
namespace fs = std::filesystem;

namespace {

Scheduler toy();
LaunchMode toyrun();    // the toy's own launcher: `toyrun -n TASKS CMD`, one task per worker
GpuStyle toy_gpus();    // the toy's own GPU request: `#TOY -gpus G`

// The toy's jobs have TOY_JOB (the id), TOY_HOSTS ("a b c"; where it is unset, as Flux's, `toyhosts JOB` prints the
// nodes as a hostlist), TOY_NODE (this node's index), TOY_TASK (an array task's index) and TOY_GPUS; its launcher
// `toyrun` gives TOY_RANK and TOY_SIZE.
class ToyJobFace final : public InJobFace {
 public:
  const char* name() const override { return "toy"; }
  bool inside(const Env& env) const override { return env_has(env, "TOY_JOB"); }
  std::string job_id(const Env& env) const override { return env_get(env, "TOY_JOB").value_or(""); }
  std::optional<JobArrayTask> array_task(const Env& env) const override {
    auto index = lenient_count(env, "TOY_TASK");
    return index ? std::optional<JobArrayTask>(JobArrayTask{job_id(env), *index}) : std::nullopt;
  }
  std::vector<std::string> job_nodes(const Env& env, const FileReader&) const override {
    auto hosts = env_get(env, "TOY_HOSTS");
    return hosts ? split(*hosts, ' ') : std::vector<std::string>{};
  }
  std::vector<std::string> node_list_command(const Env& env) const override { return {"toyhosts", job_id(env)}; }
  std::optional<int> node_count(const Env& env) const override {
    return static_cast<int>(job_nodes(env, {}).size());
  }
  std::optional<int> node_rank(const Env& env) const override { return lenient_count(env, "TOY_NODE"); }
  std::string node_name(const Env& env) const override {
    auto nodes = job_nodes(env, {});
    auto rank = node_rank(env);
    return rank && *rank < static_cast<int>(nodes.size()) ? nodes[static_cast<size_t>(*rank)] : "";
  }
  std::optional<std::string> gpu_list(const Env& env) const override { return env_get(env, "TOY_GPUS"); }
  std::optional<TaskRanks> launcher_ranks(const Env& env) const override {
    if (!env_has(env, "TOY_RANK")) return std::nullopt;
    TaskRanks r;
    r.source = {RankKind::step, "toy"};
    r.rank = require_rank_int(env, "TOY_RANK", 0, "a toy task");
    r.world_size = require_rank_int(env, "TOY_SIZE", 1, "a toy task");
    check_task_ranks(r, "a toy task", "TOY_RANK", "TOY_SIZE", "TOY_RANK", "TOY_SIZE");
    return r;
  }
  TaskRanks batch_ranks(const Env&, const FileReader&) const override { return TaskRanks{}; }
};

// "Toy": `toysub [-w JOB]... SCRIPT` answers "Job <ID> is submitted"; `toystat ID` answers "ID STATE [EXIT]"
// lines (PEND, RUN, DONE, EXIT; an array's tasks as ID[I]); `toykill ID`.
// The name under which the toy's template reads its own value; a test gives it one of render's to see it refused.
std::string toy_value_key = "toy_cores";

class ToyDialect final : public SchedulerDialect {
 public:
  const InJobFace& in_job() const override { return m_face; }
  Scheduler kind() const override { return toy(); }
  SchedulerCapabilities capabilities() const override {
    SchedulerCapabilities c;
    c.arrays = true;  // TOY_TASK
    return c;
  }
  // Its jobs may run inside a Slurm allocation, as Flux's do: inside one, its face is asked before Slurm's.
  std::vector<std::string> nests_in() const override { return {"slurm"}; }
  std::string template_path() const override { return "tests/unit/toy_scheduler_test.cc (ToyDialect)"; }
  std::optional<std::string> template_text() const override {
    return "#!/bin/bash\n{{#directives}}\n#TOY {{.}}\n{{/directives}}\n{{#array_lines}}\n{{.}}\n{{/array_lines}}\n"
           "{{#launches}}\n{{#toyrun}}toyrun -n {{ntasks}} {{/toyrun}}{{{command}}}\n{{/launches}}\n"
           "# toy cores {{toy_cores}}{{#toy_whole}}, whole nodes{{/toy_whole}}\n";
  }
  // Its own template values: render gives them to its template alone.
  std::vector<TemplateValue> template_values(const BatchRequest& r, const ScriptPlace&) const override {
    return {{toy_value_key, std::to_string(r.cpus_per_node)}, {"toy_whole", "", r.memory == "--mem=0"}};
  }
  std::vector<LaunchMode> launchers() const override { return {LaunchMode::agent, LaunchMode::mpirun, toyrun()}; }
  std::vector<GpuStyle> gpu_styles() const override { return {toy_gpus()}; }
  std::vector<std::string> directives(const BatchRequest& r, const ScriptPlace& place) const override {
    std::vector<std::string> d = {"-n " + std::to_string(r.nodes), "-name " + r.job_name, "-out " + place.job_dir + "/toy.out"};
    if (r.site.gpu.style == toy_gpus() && r.gpus_per_node > 0) d.push_back("-gpus " + std::to_string(r.gpus_per_node));
    d.insert(d.end(), place.array_directives.begin(), place.array_directives.end());
    return d;
  }
  std::vector<std::string> array_options(int count, int max_concurrent) const override {
    return {"-array " + std::to_string(count) + (max_concurrent ? "/" + std::to_string(max_concurrent) : "")};
  }
  std::vector<std::string> dependency_options(const std::vector<Dependency>& after) const override {
    std::vector<std::string> out;
    for (const auto& d : after) out.push_back("-w " + d.job_id);
    return out;
  }
  const char* array_index_variable() const override { return "TOY_TASK"; }
  std::string task_job_id(const std::string& array_id, int task) const override {
    return array_id + "[" + std::to_string(task) + "]";
  }

 private:
  ToyJobFace m_face;
};

std::string parse_toysub(const ProcessResult& r) {
  throw_if_refused("toysub", r);
  static const std::regex k_id("Job <([0-9]+)> is submitted");
  std::smatch m;
  std::string out(trim(r.out));
  if (!std::regex_search(out, m, k_id)) throw failure("toysub", "answered '" + out + "', which holds no job id");
  return m[1].str();
}

// "42 RUN", "42[1] EXIT 3": each id's state.
std::map<std::string, JobState> parse_toystat(std::string_view out) {
  std::map<std::string, JobState> states;
  for (const auto& line : split(out, '\n')) {
    auto words = split(trim(line), ' ');
    if (words.size() < 2) continue;
    JobState s;
    s.raw = words[1];
    if (s.raw == "PEND") s.phase = Phase::pending;
    else if (s.raw == "RUN") s.phase = Phase::running;
    else if (s.raw == "DONE") s.phase = Phase::completed;
    else s.phase = Phase::failed;
    long long code = 0;
    if (words.size() > 2 && parse_int(words[2], &code)) s.exit_code = static_cast<int>(code);
    states[words[0]] = s;
  }
  return states;
}

class ToyBackend final : public SchedulerBackend {
 public:
  Scheduler kind() const override { return toy(); }
  std::string submit(const std::string& script, const std::vector<std::string>& options,
                     const CommandRunner& run) const override {
    std::vector<std::string> argv = {"toysub"};
    for (const auto& o : options) {
      auto words = split(o, ' ');
      argv.insert(argv.end(), words.begin(), words.end());
    }
    argv.push_back(script);
    return parse_toysub(run(argv));
  }
  JobState query(const JobRecord& job, const CommandRunner& run) const override {
    if (job.is_array()) return summarize_tasks(query_tasks(job, run));
    require_submitted(job);
    ProcessResult r = run({"toystat", job.job_id});
    if (r.exit_code != 0) command_failed({"toystat", job.job_id}, r, "start the toy scheduler");
    auto states = parse_toystat(r.out);
    if (auto it = states.find(job.job_id); it != states.end()) return it->second;
    return forgotten_job(output_files(job));
  }
  void cancel(const JobRecord& job, const CommandRunner& run) const override {
    require_submitted(job);
    ProcessResult r = run({"toykill", job.job_id});
    if (r.exit_code != 0) command_failed({"toykill", job.job_id}, r, "start the toy scheduler");
  }
  std::vector<std::string> output_files(const JobRecord& job) const override { return {job.dir + "/toy.out"}; }
};

// The toy's registry line: what a line of site/schedulers.def is for a built-in scheduler (and of launchers.def and
// gpu_styles.def for its launcher and GPU style).
Scheduler toy() {
  static const ToyDialect dialect;
  static const ToyBackend backend;
  static const Scheduler id = register_scheduler("toy", dialect, backend);
  return id;
}
LaunchMode toyrun() {
  static const LaunchMode id = register_launcher("toyrun", LaunchTasks::per_worker);
  return id;
}
GpuStyle toy_gpus() {
  static const GpuStyle id = register_gpu_style("toy-gpus", GpuType::untyped);
  return id;
}

// The toy scheduler's commands: what was run, and the answers.
struct FakeToy {
  std::vector<std::vector<std::string>> ran;
  std::map<std::string, ProcessResult> answers;  // by program name
  CommandRunner runner() {
    return [this](const std::vector<std::string>& argv) {
      ran.push_back(argv);
      auto it = answers.find(argv.at(0));
      return it == answers.end() ? ProcessResult{127, "", argv[0] + ": not found"} : it->second;
    };
  }
};

// A cluster run by the toy scheduler, as a user's --site-file.
constexpr const char* k_toy_site = R"(name: toybox
title: A cluster the toy scheduler runs (tests/unit/toy_scheduler_test.cc)
scheduler: toy
node: {gpus: 4, cores: 16, memory_gb: 64}
launch: {default: agent, allowed: [agent, mpirun, toyrun]}
gpu_request: {style: toy-gpus}
)";

struct TempState : test::TempState {
  std::string site_file;
  TempState() : test::TempState("toy-scheduler-test"), site_file((base / "toybox.yaml").string()) {
    toy(), toyrun(), toy_gpus();
    write_file_atomic(site_file, k_toy_site);
  }
};

JobRequest plan_request(const std::string& site, const std::string& launcher) {
  JobRequest r;
  r.site = site;
  r.command = {"python", "train.py"};
  r.launcher = launcher;
  return r;
}

SubmitRequest toy_request(const TempState& t, const std::string& dir, int array = 0) {
  SubmitRequest o;
  o.site_files = {t.site_file};
  o.job_dir = dir;
  o.request.site = "toybox";
  o.request.nodes = 2;
  o.request.command = {"python", "train.py"};
  o.request.name = "toyjob";
  if (array) o.request.array.count = array, o.request.array.count_origin = "--array";
  return o;
}

}  // namespace

TEST_SUITE_BEGIN("toy_scheduler");

TEST_CASE("the toy's registry line: profiles and job.json may name it, the registry gives its dialect and backend") {
  TempState t;
  REQUIRE(scheduler_named("toy") == toy());
  CHECK(std::string(to_string(toy())) == "toy");
  CHECK(dialect_for(toy()).kind() == toy());
  CHECK(backend_for(toy()).kind() == toy());
  CHECK(&backend_for(toy()).dialect() == &dialect_for(toy()));
  SiteRegistry sites = load_sites({t.site_file}, scheduler_checks());
  CHECK(sites.get("toybox").scheduler == toy());
  CHECK(profile_to_yaml(sites.get("toybox")).find("scheduler: toy\n") != std::string::npos);
  CHECK_THROWS_WITH_AS(register_scheduler("slurm", dialect_for(toy()), backend_for(toy())),
                       doctest::Contains("'slurm' is taken"), Error);

  // A launcher the toy cannot start, in the profile: refused with the line that names the toy.
  write_file_atomic(t.site_file, std::string(k_toy_site).replace(std::string(k_toy_site).find("toyrun]"), 7, "srun]"));
  const std::string refusal = "launch.allowed: " + launcher_needs(LaunchMode::srun) + " but the scheduler is toy";
  CHECK_THROWS_WITH_AS(load_sites({t.site_file}, scheduler_checks()), doctest::Contains(refusal.c_str()), Error);
}

TEST_CASE("a toy site's job: submit plans, renders, submits through the toy's backend; status and cancel find it") {
  TempState t;
  const std::string dir = (t.base / "job").string();
  FakeToy toy_cluster;
  toy_cluster.answers["toysub"] = {0, "Job <42> is submitted to queue <normal>.\n", ""};
  SubmitRequest o = toy_request(t, dir);
  o.after = {"7"};
  Submission s = submit_request(o, toy_cluster.runner());
  CHECK(s.scheduler == toy());
  CHECK(s.job_id == "42");
  CHECK(s.plan.launcher == LaunchMode::agent);
  CHECK(s.script.rfind("#!/bin/bash\n#TOY -n 2\n#TOY -name toyjob\n#TOY -out " + dir + "/toy.out\n#TOY -gpus 4\n", 0) == 0);
  CHECK(s.script.find("python train.py") != std::string::npos);
  // The toy's own template values, from its dialect (template_values): a text, and a flag, off here (the plan asks
  // no --mem=0), whose section stays closed.
  REQUIRE(s.plan.memory.empty());
  CHECK(s.script.find("\n# toy cores " + std::to_string(s.plan.cpus_per_node) + "\n") != std::string::npos);
  // A value named as one of render's own is refused, naming the template.
  toy_value_key = "nodes";
  CHECK(test::error_of_call([&] { render_script(s.plan, {"/bin/hpclaunch", dir, dir, {}}); }) ==
        "tests/unit/toy_scheduler_test.cc (ToyDialect): the scheduler's template value 'nodes' is also one render gives; "
        "rename it in the dialect's template_values and its template");
  toy_value_key = "toy_cores";
  LaunchPlan whole = s.plan;
  whole.memory = "--mem=0";  // the flag on: its section opens
  CHECK(render_script(whole, {"/bin/hpclaunch", dir, dir, {}}).find("\n# toy cores 16, whole nodes\n") != std::string::npos);
  REQUIRE(toy_cluster.ran.size() == 1);
  CHECK(toy_cluster.ran[0] == std::vector<std::string>{"toysub", "-w", "7", dir + "/job.sh"});
  CHECK(read_file(dir + "/job.sh") == s.script);
  CHECK(read_job_index() == std::vector<std::string>{dir});

  // Read back as `status` and `cancel` read it: job.json names the toy, and the registry gives its backend.
  JobRecord job = read_job_record(dir);
  REQUIRE(job.scheduler == toy());
  const SchedulerBackend& backend = backend_for(job.scheduler);
  toy_cluster.answers["toystat"] = {0, "42 RUN\n", ""};
  CHECK(describe(backend.query(job, toy_cluster.runner())) == "RUN");
  toy_cluster.answers["toystat"] = {0, "42 EXIT 3\n", ""};
  JobState ended = backend.query(job, toy_cluster.runner());
  CHECK(ended.phase == Phase::failed);
  CHECK(ended.exit_code == 3);
  toy_cluster.answers["toystat"] = {0, "", ""};  // forgotten, and no output
  CHECK(backend.query(job, toy_cluster.runner()).phase == Phase::finished_unknown);

  toy_cluster.answers["toykill"] = {0, "", ""};
  backend.cancel(job, toy_cluster.runner());
  CHECK(toy_cluster.ran.back() == std::vector<std::string>{"toykill", "42"});

  // Refused by the toy's own submit command: its words, and nothing left behind.
  toy_cluster.answers["toysub"] = {1, "", "toysub: queue closed\n"};
  CHECK_THROWS_WITH_AS(submit_request(toy_request(t, (t.base / "refused").string()), toy_cluster.runner()),
                       doctest::Contains("toysub: refused the job (exit 1): toysub: queue closed"), Error);
  CHECK_FALSE(fs::exists(t.base / "refused"));
}

TEST_CASE("the toy scheduler's arrays: its options, its task variable, its task ids, each task's state") {
  TempState t;
  const std::string dir = (t.base / "array").string();
  FakeToy toy_cluster;
  toy_cluster.answers["toysub"] = {0, "Job <50> is submitted\n", ""};
  Submission s = submit_request(toy_request(t, dir, 3), toy_cluster.runner());
  CHECK(s.script.find("#TOY -array 3\n") != std::string::npos);
  CHECK(s.script.find("export HPCLAUNCH_ARRAY_TASK=\"$TOY_TASK\"") != std::string::npos);
  JobRecord job = read_job_record(dir);
  REQUIRE(job.is_array());
  const SchedulerBackend& backend = backend_for(job.scheduler);
  CHECK(backend.dialect().task_job_id(job.job_id, 1) == "50[1]");

  toy_cluster.answers["toystat"] = {0, "50[0] DONE 0\n50[1] RUN\n50[2] PEND\n", ""};
  std::vector<JobState> tasks = backend.query_tasks(job, toy_cluster.runner());
  REQUIRE(tasks.size() == 3);
  CHECK(tasks[0].phase == Phase::completed);
  CHECK(tasks[1].phase == Phase::running);
  CHECK(tasks[2].phase == Phase::pending);
  CHECK(toy_cluster.ran.back() == std::vector<std::string>{"toystat", "50[2]"});
  CHECK(describe(backend.query(job, toy_cluster.runner())) == describe(summarize_tasks(tasks)));
}

TEST_CASE("a toy job's environment is read by the toy's face, which the registry offers") {
  toy();
  Env env = {{"TOY_JOB", "42"}, {"TOY_HOSTS", "a b"}, {"TOY_NODE", "1"}, {"TOY_TASK", "3"}, {"TOY_GPUS", "0,1"},
             {"TOY_RANK", "5"}, {"TOY_SIZE", "8"}};
  const InJobFace* face = job_face(env);
  REQUIRE(face == &dialect_for(toy()).in_job());
  CHECK(face->inside(env));
  CHECK_FALSE(face->inside({{"SLURM_JOB_ID", "1"}}));
  CHECK(face->job_id(env) == "42");
  CHECK(face->array_task(env)->index == 3);
  CHECK(face->job_nodes(env, {}) == std::vector<std::string>{"a", "b"});
  CHECK(face->node_count(env) == 2);
  CHECK(face->node_name(env) == "b");
  CHECK(face->gpu_count(env) == 2);
  CHECK(face->launcher_ranks(env)->rank == 5);
  CHECK(job_dialect(env)->kind() == toy());
  CHECK(capability_names(job_dialect(env)->capabilities()) == std::vector<std::string>{"arrays"});
  TaskRanks ranks = detect_task_ranks(env, {});
  CHECK(ranks.rank == 5);
  CHECK(ranks.world_size == 8);
  env["TOY_RANK"] = "9";
  CHECK_THROWS_WITH_AS(face->launcher_ranks(env), doctest::Contains("TOY_RANK=9 is not below TOY_SIZE=8"), Error);

  // Without TOY_HOSTS, as in a Flux job, the nodes come from `toyhosts JOB`: the runtime runs it through the runner
  // it is given, and the face only names it and reads its answer.
  Env bare = {{"TOY_JOB", "42"}};
  CHECK(face->job_nodes(bare, {}).empty());
  std::vector<std::vector<std::string>> asked;
  CommandReader toyhosts = [&](const std::vector<std::string>& argv) {
    asked.push_back(argv);
    return std::string("n[1-2],m7\n");
  };
  CHECK(job_nodes(bare, {}, toyhosts) == std::vector<std::string>{"n1", "n2", "m7"});
  CHECK(step_nodes(bare, {}, toyhosts) == std::vector<std::string>{"n1", "n2", "m7"});
  CHECK(asked == std::vector<std::vector<std::string>>{{"toyhosts", "42"}, {"toyhosts", "42"}});
  CHECK(job_nodes(env, {}, toyhosts) == std::vector<std::string>{"a", "b"});  // the environment's, when it names them
  CHECK(asked.size() == 2);
  CHECK_THROWS_WITH_AS(job_nodes(bare, {}), doctest::Contains("toyhosts 42: toy names its nodes only through this command"),
                       Error);

  // A toyrun task of such a job: its ranks from the toy's launcher, MASTER_ADDR the first node `toyhosts` names.
  Env task = {{"TOY_JOB", "42"}, {"TOY_RANK", "5"}, {"TOY_SIZE", "8"}};
  CHECK((detect_task_ranks(task, {}).source == RankSource{RankKind::step, "toy"}));
  auto resolve = [](const std::string& host) { return host == "n1" ? std::optional<std::string>("10.0.0.1") : std::nullopt; };
  TaskEnvEffects effects{{}, resolve, toyhosts};
  TaskEnv vars = compute_task_env(task, {}, effects);
  std::map<std::string, std::string> set(vars.vars.begin(), vars.vars.end());
  CHECK(set["RANK"] == "5");
  CHECK(set["WORLD_SIZE"] == "8");
  CHECK(set["MASTER_ADDR"] == "n1");
}

TEST_CASE("the toy's own launcher and GPU style, registered in this file alone: a plan and a script through them") {
  TempState t;
  REQUIRE(launch_mode_named("toyrun") == toyrun());
  REQUIRE(gpu_style_named("toy-gpus") == toy_gpus());
  CHECK_THROWS_WITH_AS(register_launcher("srun", LaunchTasks::per_worker), doctest::Contains("'srun' is taken"), Error);
  CHECK_THROWS_WITH_AS(register_gpu_style("gres", GpuType::typed), doctest::Contains("'gres' is taken"), Error);
  SiteRegistry sites = load_sites({t.site_file}, scheduler_checks());
  const SiteProfile& site = sites.get("toybox");
  CHECK(site.gpu.style == toy_gpus());
  CHECK(site.allows(toyrun()));
  std::string shown = profile_to_yaml(site);
  CHECK(shown.find("style: toy-gpus") != std::string::npos);
  CHECK(shown.find("toyrun") != std::string::npos);

  const std::string dir = (t.base / "toyrun").string();
  FakeToy toy_cluster;
  toy_cluster.answers["toysub"] = {0, "Job <43> is submitted\n", ""};
  SubmitRequest o = toy_request(t, dir);
  o.request.launcher = "toyrun";
  Submission s = submit_request(o, toy_cluster.runner());
  CHECK(s.plan.launcher == toyrun());
  CHECK(s.plan.ntasks_per_node == 4);  // a task per worker, as its registry line says
  CHECK(s.plan.ntasks == 8);
  CHECK(s.script.find("#TOY -gpus 4\n") != std::string::npos);
  CHECK(s.script.find("\ntoyrun -n 8 python train.py\n") != std::string::npos);
  CHECK(read_file(dir + "/plan.json").value_or("").find("\"launcher\": \"toyrun\"") != std::string::npos);

  // sbatch's memory words are Slurm's, not every scheduler's: the toy, which says none, asks nothing.
  SiteProfile whole_node = site;
  whole_node.memory.style = MemoryStyle::whole_node;
  CHECK(make_plan(o.request, whole_node).memory.empty());

  // Another scheduler takes neither: its dialect does not name them.
  CHECK(test::error_of_call([&] { make_plan(plan_request("perlmutter", "toyrun"), sites.get("perlmutter")); }) ==
        "--launcher: toyrun needs toy, but perlmutter runs slurm; use --launcher srun");
  const std::string slurm_site = "name: slurmbox\nscheduler: slurm\nnode: {gpus: 4, cores: 16}\n";
  const std::pair<std::string, std::string> k_refused[] = {
      {"launch: {default: srun, allowed: [srun]}\ngpu_request: {style: toy-gpus}\n",
       "gpu_request.style: slurm writes no toy-gpus request (it writes gpus-per-node, gres or none)"},
      {"launch: {default: srun, allowed: [srun, toyrun]}\n", "launch.allowed: toyrun needs toy but the scheduler is slurm"}};
  for (const auto& [rest, error] : k_refused) {
    write_file_atomic(t.site_file, slurm_site + rest);
    CHECK_THROWS_WITH_AS(load_sites({t.site_file}, scheduler_checks()), doctest::Contains(error.c_str()), Error);
  }
}

TEST_CASE("the toy nests in Slurm: inside both, its face is asked first; the order is innermost first, then by name") {
  toy();
  // A toy job started inside a Slurm allocation sees both schedulers' variables; the innermost, the toy, wins.
  Env both = {{"SLURM_JOB_ID", "7"}, {"SLURM_NNODES", "2"}, {"SLURM_NODEID", "0"}, {"TOY_JOB", "42"},
              {"TOY_HOSTS", "a b"}, {"TOY_NODE", "1"}};
  REQUIRE(job_face(both) == &dialect_for(toy()).in_job());
  CHECK(job_id(both) == "42");
  both.erase("TOY_JOB");
  CHECK(std::string(job_face(both)->name()) == "slurm");

  // all_dialects: each one once; one that nests in another (by name, or "*" in all that do not say "*") before it;
  // otherwise by name.
  std::vector<const SchedulerDialect*> order = all_dialects();
  auto at = [&](const SchedulerDialect* d) { return std::find(order.begin(), order.end(), d) - order.begin(); };
  CHECK(order.size() == names_of(scheduler_names()).size());
  for (const SchedulerDialect* inner : order) {
    const std::vector<std::string> outer = inner->nests_in();
    bool any = std::find(outer.begin(), outer.end(), "*") != outer.end();
    for (const SchedulerDialect* d : order) {
      const std::vector<std::string> theirs = d->nests_in();
      bool named = std::find(outer.begin(), outer.end(), to_string(d->kind())) != outer.end();
      if (d != inner && (named || (any && std::find(theirs.begin(), theirs.end(), "*") == theirs.end())))
        CHECK_MESSAGE(at(inner) < at(d), to_string(inner->kind()), " nests in ", to_string(d->kind()));
    }
  }
  CHECK(at(&dialect_for(toy())) < at(&dialect_for(*scheduler_named("slurm"))));
  CHECK(at(&dialect_for(*scheduler_named("pbs"))) < at(&dialect_for(*scheduler_named("slurm"))));  // by name
  // A launcher's refusal names the schedulers that start it in that order.
  std::vector<std::string> starters;
  for (const SchedulerDialect* d : order)
    if (d->offers(LaunchMode::mpirun)) starters.push_back(to_string(d->kind()));
  CHECK(launcher_needs(LaunchMode::mpirun) == "mpirun needs " + join_or(starters));
  CHECK(std::find(starters.begin(), starters.end(), "toy") != starters.end());
}

TEST_CASE("a launcher the toy scheduler does not offer is refused by the plan's check") {
  TempState t;
  SiteRegistry sites = load_sites({t.site_file}, scheduler_checks());
  JobRequest r = plan_request("toybox", "srun");
  CHECK(test::error_of_call([&] { make_plan(r, sites.get("toybox")); }) ==
        "--launcher: " + launcher_needs(LaunchMode::srun) + ", but toybox runs toy; use --launcher agent");
  r.launcher = "mpirun";
  CHECK(make_plan(r, sites.get("toybox")).launcher == LaunchMode::mpirun);
}

TEST_SUITE_END();

}  // namespace toy_scheduler_test
