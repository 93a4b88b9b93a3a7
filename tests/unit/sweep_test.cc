#include <doctest/doctest.h>

#include "test_util.h"

#include <nlohmann/json.hpp>

#include "plan/job_spec.h"
#include "plan/plan.h"
#include "plan/sweep.h"
#include "site/registry.h"
#include "util/error.h"
#include "submit/submit_job.h"

namespace sweep_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

namespace {

std::string error_of(const std::function<void()>& f) { return test::error_of_call(f); }

ArrayRequest sweep_of(std::vector<std::string> flags, bool zip = false) {
  ArrayRequest r;
  for (const auto& f : flags) r.sweep.push_back(parse_sweep_flag(f));
  r.zip = zip;
  return r;
}

std::vector<std::string> values_of(const ArrayPlan& p, size_t task) {
  std::vector<std::string> out;
  for (const auto& kv : p.tasks.at(task).values) out.push_back(kv.first + "=" + kv.second);
  return out;
}

using Words = std::vector<std::string>;

}  // namespace

TEST_SUITE_BEGIN("sweep");

TEST_CASE("--sweep KEY=V1,V2 is a key and its values; bad forms name --sweep and say how to write it") {
  SweepAxis a = parse_sweep_flag("lr=1e-3,3e-3");
  CHECK(a.key == "lr");
  CHECK(a.values == Words{"1e-3", "3e-3"});
  CHECK(a.origin == "--sweep");
  CHECK(parse_sweep_flag("warmup-steps=0").values == Words{"0"});
  CHECK(parse_sweep_flag("opt=a=b").values == Words{"a=b"});  // only the first '=' splits
  CHECK(error_of([] { parse_sweep_flag("lr"); }) ==
        "--sweep: 'lr' has no '='; write --sweep KEY=V1,V2,..., e.g. --sweep lr=1e-3,3e-3");
  CHECK(error_of([] { parse_sweep_flag("=1,2"); }).rfind("--sweep: the key before '=' is empty; use letters", 0) == 0);
  CHECK(error_of([] { parse_sweep_flag("2lr=1"); }).rfind("--sweep: '2lr' does not start with a letter", 0) == 0);
  CHECK(error_of([] { parse_sweep_flag("l r=1"); }).rfind("--sweep: 'l r' has a ' '", 0) == 0);
  CHECK(error_of([] { parse_sweep_flag("lr="); }) == "--sweep: 'lr' has no values; list them: --sweep lr=V1,V2");
  CHECK(error_of([] { parse_sweep_flag("lr=1,,2"); }) ==
        "--sweep: 'lr' has an empty value; remove the extra comma, or quote the values in a --spec list");
  CHECK(error_of([] { parse_sweep_flag("task=1,2"); }).rfind("--sweep: 'task' is hpclaunch's own placeholder ({task})", 0) == 0);
}

TEST_CASE("several --sweep flags give every combination, the last key varying fastest") {
  ArrayPlan p = expand_array(sweep_of({"lr=1,2", "bs=a,b,c"}));
  REQUIRE(p.count() == 6);
  CHECK(p.mode == "product");
  CHECK(p.keys == Words{"lr", "bs"});
  CHECK(values_of(p, 0) == Words{"lr=1", "bs=a"});
  CHECK(values_of(p, 1) == Words{"lr=1", "bs=b"});
  CHECK(values_of(p, 3) == Words{"lr=2", "bs=a"});
  CHECK(values_of(p, 5) == Words{"lr=2", "bs=c"});
  for (int i = 0; i < 6; ++i) CHECK(p.tasks[static_cast<size_t>(i)].index == i);
  CHECK(expand_array(sweep_of({"seed=1,2,3"})).count() == 3);
}

TEST_CASE("--sweep-zip pairs the i-th values; different lengths are an error naming the flag") {
  ArrayPlan p = expand_array(sweep_of({"lr=1,2,3", "bs=a,b,c"}, true));
  REQUIRE(p.count() == 3);
  CHECK(p.mode == "zip");
  CHECK(values_of(p, 2) == Words{"lr=3", "bs=c"});
  CHECK(error_of([] { expand_array(sweep_of({"lr=1,2,3", "bs=a,b"}, true)); }) ==
        "--sweep-zip: 'lr' has 3 value(s) but 'bs' has 2; give every swept key the same number of values, or drop "
        "--sweep-zip for their product");
  ArrayRequest zip_alone;
  zip_alone.zip = true;
  CHECK(error_of([&] { expand_array(zip_alone); }) == "--sweep-zip: there is no --sweep to zip; add --sweep KEY=V1,V2 (repeatable)");
}

TEST_CASE("--array N is N tasks without values; it and --sweep do not mix") {
  ArrayRequest r;
  r.count = 4;
  ArrayPlan p = expand_array(r);
  CHECK(p.count() == 4);
  CHECK(p.mode == "array");
  CHECK(p.keys.empty());
  CHECK(p.tasks[3].values.empty());
  CHECK_FALSE(expand_array(ArrayRequest{}).active());
  r.sweep.push_back(parse_sweep_flag("lr=1,2"));
  CHECK(error_of([&] { expand_array(r); }).rfind("--array: --array and --sweep both set the number of tasks; give one", 0) == 0);
  ArrayRequest zero;
  zero.count = 0;
  CHECK(error_of([&] { expand_array(zero); }) == "--array: 0 is not in 1..10000; give the number of tasks, e.g. --array 4");
}

TEST_CASE("--max-concurrent limits an array; alone, or below 1, it is an error") {
  ArrayRequest r;
  r.count = 3;
  r.max_concurrent = 2;
  CHECK(expand_array(r).max_concurrent == 2);
  r.max_concurrent = 0;
  CHECK(error_of([&] { expand_array(r); }) == "--max-concurrent: 0 is below 1; use 1 or more (tasks at once)");
  ArrayRequest alone;
  alone.max_concurrent = 2;
  CHECK(error_of([&] { expand_array(alone); }) ==
        "--max-concurrent: limits the tasks of an array, but there is none; add --array N or --sweep KEY=V1,V2");
}

TEST_CASE("an array has at most k_max_array_tasks tasks, however they are asked for") {
  ArrayRequest r;
  r.count = k_max_array_tasks;
  CHECK(expand_array(r).count() == k_max_array_tasks);
  r.count = k_max_array_tasks + 1;
  CHECK(error_of([&] { expand_array(r); }) == "--array: 10001 is not in 1..10000; give the number of tasks, e.g. --array 4");
  std::string hundred = "a=0";
  for (int i = 1; i < 100; ++i) hundred += "," + std::to_string(i);
  std::string b = hundred, c = hundred;
  b[0] = 'b';
  c[0] = 'c';
  CHECK(expand_array(sweep_of({hundred, b})).count() == 10000);
  // 100 x 100 x 100 stops at the third key, before a million tasks are made.
  CHECK(error_of([&] { expand_array(sweep_of({hundred, b, c})); }) ==
        "--sweep: the product of 100 x 100 x 100 value(s) is more than 10000 tasks; sweep fewer values, use --sweep-zip, "
        "or split the sweep into several submissions");
}

TEST_CASE("a key swept twice, or two keys with one variable, is an error") {
  CHECK(error_of([] { expand_array(sweep_of({"lr=1", "lr=2"})); }).rfind("--sweep: 'lr' is swept twice", 0) == 0);
  CHECK(error_of([] { expand_array(sweep_of({"warmup-steps=1", "warmup_steps=2"})); }) ==
        "--sweep: 'warmup_steps' and another key both become HPCLAUNCH_SWEEP_WARMUP_STEPS; spell keys that differ only "
        "in '-' and '_' the same way");
  CHECK(sweep_env_name("warmup-steps") == "HPCLAUNCH_SWEEP_WARMUP_STEPS");
}

TEST_CASE("values replace {key} placeholders; keys no word names are appended as --key VALUE") {
  ArrayPlan p = expand_array(sweep_of({"lr=0.1,0.2", "bs=64"}));
  const ArrayTask& t = p.tasks[1];
  CHECK(task_command({"train", "--lr={lr}", "--out", "run-{lr}-{task}"}, p, t, "/j/tasks/1") ==
        Words{"train", "--lr=0.2", "--out", "run-0.2-1", "--bs", "64"});
  CHECK(task_command({"train"}, p, t, "/j/tasks/1") == Words{"train", "--lr", "0.2", "--bs", "64"});
  CHECK(task_command({"train", "--metrics", "{task_dir}/m.jsonl"}, p, t, "/j/tasks/1") ==
        Words{"train", "--metrics", "/j/tasks/1/m.jsonl", "--lr", "0.2", "--bs", "64"});
  // {{name}} is a literal {name}; ${VAR} is the shell's; a brace that is no placeholder is left alone.
  CHECK(task_command({"bash", "-c", "echo {{lr}} ${HOME} {} {1,2} x{", "{lr}"}, p, t, "/d") ==
        Words{"bash", "-c", "echo {lr} ${HOME} {} {1,2} x{", "0.2", "--bs", "64"});
}

TEST_CASE("an unknown placeholder is an error naming the word, with did-you-mean") {
  ArrayPlan p = expand_array(sweep_of({"warmup=0,4"}));
  CHECK(error_of([&] { task_command({"train", "--warmup", "{wramup}"}, p, p.tasks[0], "/d"); }) ==
        "-- {wramup}: '{wramup}' is not a swept key nor {task} or {task_dir} (did you mean 'warmup'?); sweep it "
        "(--sweep wramup=...), or write {{wramup}} for a literal {wramup}");
  ArrayRequest r;
  r.count = 2;
  ArrayPlan plain = expand_array(r);
  CHECK(task_command({"train", "--seed", "{task}"}, plain, plain.tasks[1], "/d") == Words{"train", "--seed", "1"});
  CHECK(error_of([&] { task_command({"x{seed}"}, plain, plain.tasks[0], "/d"); }) ==
        "-- x{seed}: '{seed}' is not a swept key nor {task} or {task_dir}; write {{seed}} for a literal {seed}");
}

TEST_CASE("values are data: spaces, quotes, $ and newlines reach the task's argv and environment unchanged") {
  SweepAxis a{"msg", {"a b", "it's \"x\"", "$HOME `id`", "two\nlines"}, "--sweep"};
  ArrayRequest r;
  r.sweep = {a};
  ArrayPlan p = expand_array(r);
  for (size_t i = 0; i < a.values.size(); ++i) {
    CHECK(task_command({"echo", "{msg}"}, p, p.tasks[i], "/d") == Words{"echo", a.values[i]});
    CHECK(task_env(p.tasks[i]) == std::vector<std::pair<std::string, std::string>>{{"HPCLAUNCH_SWEEP_MSG", a.values[i]}});
  }
  CHECK(task_label(p.tasks[0].values, 0) == "msg=a b");
  CHECK(task_label({}, 3) == "task 3");
}

TEST_CASE("tasks that would all write one metrics file or checkpoint directory are refused") {
  ArrayPlan p = expand_array(sweep_of({"lr=0.1,0.2"}));
  CHECK(error_of([&] { check_task_outputs({"hpclaunch-train", "--metrics", "m.jsonl"}, p); }) ==
        "-- ... --metrics: every task of the array would write 'm.jsonl', each over the others'; put the task's directory "
        "in it: --metrics {task_dir}/metrics.jsonl");
  CHECK(error_of([&] { check_task_outputs({"hpclaunch-train", "--checkpoint-dir=ck"}, p); }) ==
        "-- ... --checkpoint-dir: every task of the array would write 'ck', each over the others'; put the task's "
        "directory in it: --checkpoint-dir {task_dir}/checkpoints");
  CHECK_NOTHROW(check_task_outputs({"hpclaunch-train", "--metrics", "{task_dir}/m.jsonl", "--checkpoint-dir", "ck-{lr}"}, p));
  CHECK_NOTHROW(check_task_outputs({"hpclaunch-train"}, p));
  ArrayPlan one = expand_array(sweep_of({"lr=0.1"}));
  CHECK_NOTHROW(check_task_outputs({"hpclaunch-train", "--metrics", "m.jsonl"}, one));
}

TEST_CASE("the --dry-run table lists each task's values and command") {
  ArrayPlan p = expand_array(sweep_of({"lr=0.1,0.25", "name=a b"}));
  CHECK(task_table({"train", "--out", "{task_dir}"}, p, "/j") ==
        "TASK  lr    name  COMMAND\n"
        "0     0.1   a b   train --out /j/tasks/0 --lr 0.1 --name 'a b'\n"
        "1     0.25  a b   train --out /j/tasks/1 --lr 0.25 --name 'a b'\n");
}

TEST_CASE("make_plan plans the array and writes it to plan.json; an unknown placeholder stops it") {
  JobRequest r;
  r.site = "local";
  r.command = {"hpclaunch-train", "--lr", "{lr}"};
  r.array = sweep_of({"lr=0.1,0.2"});
  r.array.max_concurrent = 2;
  const SiteRegistry sites = builtin_sites();
  LaunchPlan p = make_plan(r, sites.get("local"));
  CHECK(p.array.count() == 2);
  nlohmann::json j = plan_file(p);
  CHECK(j["array"]["tasks"] == 2);
  CHECK(j["array"]["max_concurrent"] == 2);
  CHECK(j["array"]["mode"] == "product");
  CHECK(j["array"]["keys"] == nlohmann::json::array({"lr"}));
  r.command = {"hpclaunch-train", "--lr", "{learning_rate}"};
  CHECK(error_of([&] { make_plan(r, sites.get("local")); }).rfind("-- {learning_rate}: '{learning_rate}' is not a swept key", 0) == 0);
  r.array = {};
  CHECK_FALSE(nlohmann::json(plan_file(make_plan(r, sites.get("local")))).contains("array"));  // a single job: braces untouched
}

TEST_CASE("a spec holds the sweep; its errors name file:line:column, and flags replace it") {
  JobRequest r;
  read_job_spec("s.yaml", "sweep:\n  lr: [1e-3, 3e-3]\n  bs: [64, 128]\nsweep_zip: true\nmax_concurrent: 2\n", &r);
  REQUIRE(r.array.sweep.size() == 2);
  CHECK(r.array.sweep[0].key == "lr");
  CHECK(r.array.sweep[0].values == Words{"1e-3", "3e-3"});
  CHECK(r.array.sweep[1].origin == "s.yaml:3:3");
  CHECK(r.array.zip);
  CHECK(r.array.max_concurrent == 2);
  CHECK(expand_array(r.array).count() == 2);
  JobRequest z;
  read_job_spec("s.yaml", "sweep:\n  lr: [1, 2, 3]\n  bs: [64]\nsweep_zip: true\n", &z);
  CHECK(error_of([&] { expand_array(z.array); }).rfind("s.yaml:4:12: 'lr' has 3 value(s) but 'bs' has 1", 0) == 0);
  JobRequest a;
  read_job_spec("s.yaml", "array: 5\n", &a);
  CHECK(a.array.count == 5);
  CHECK(error_of([&] { read_job_spec("s.yaml", "sweep: [1, 2]\n", &a); }) ==
        "s.yaml:1:8: sweep: expected a mapping of keys to lists of values; write e.g. `sweep: {lr: [1e-3, 3e-3]}`");
  CHECK(error_of([&] { read_job_spec("s.yaml", "sweep:\n  lr: 0.1\n", &a); }) ==
        "s.yaml:2:7: sweep.lr: expected a list of values; write it as `lr: [V1, V2]`");
  CHECK(error_of([&] { read_job_spec("s.yaml", "sweep:\n  l r: [1]\n", &a); }).rfind("s.yaml:2:3: sweep: 'l r' has a ' '", 0) == 0);
  CHECK(error_of([&] { read_job_spec("s.yaml", "sweep:\n  lr: ['']\n", &a); }) == "s.yaml:2:8: sweep.lr[]: is empty; give a value, or remove it");
  CHECK(error_of([&] { read_job_spec("s.yaml", "array: 0\n", &a); }) == "s.yaml:1:8: array: 0 is out of range 1..10000; fix the value");
  JobRequest dup;
  read_job_spec("s.yaml", "sweep:\n  lr: [1]\n  bs: [1]\narray: 2\n", &dup);
  CHECK(error_of([&] { expand_array(dup.array); }).rfind("s.yaml:4:8: --array and --sweep both set the number of tasks", 0) == 0);
}

TEST_SUITE_END();

}  // namespace sweep_test
