// One capabilities record per scheduler (dialect/dialect.h's SchedulerCapabilities): what each built-in one declares,
// that every registered scheduler's dialect and backend do what its record says, and that a profile only narrows it.
#include <doctest/doctest.h>

#include "dialect/dialect.h"
#include "scheduler/backend.h"
#include "site/profile_yaml.h"
#include "test_util.h"

using namespace hpclaunch;

namespace {

using CapabilityList = std::vector<std::string>;

CapabilityList capabilities_named(const char* scheduler) {
  return capability_names(dialect_for(*scheduler_named(scheduler)).capabilities());
}

// A scheduler command that fails, as one run where no scheduler is.
ProcessResult no_scheduler_here(const std::vector<std::string>&) { return {127, "", "not found"}; }

std::string profile_load_error(const std::string& text) {
  return test::error_of_call(
      [&] { read_profiles({"caps.yaml", text}, [](const std::string&) { return nullptr; }, scheduler_checks()); });
}

}  // namespace

TEST_CASE("each built-in scheduler declares what it can do, in one record") {
  CHECK(capabilities_named("slurm") == CapabilityList{"arrays", "requeue", "exclude-nodes", "warning-signal", "test-only", "survey"});
  CHECK(capabilities_named("pbs") == CapabilityList{"arrays", "survey"});
  CHECK(capabilities_named("local") == CapabilityList{"arrays", "requeue", "warning-signal"});
  CHECK(capabilities_named("flux").empty());
  CHECK(schedulers_with(&SchedulerCapabilities::test_only) == "slurm");
}

TEST_CASE("every registered scheduler's dialect and backend do what its record says") {
  for (const SchedulerDialect* d : all_dialects()) {
    const SchedulerCapabilities can = d->capabilities();
    const SchedulerBackend& backend = backend_for(d->kind());
    INFO("scheduler " << std::string(to_string(d->kind())));
    // Arrays: options that ask the scheduler for tasks and a variable giving each its index, or a runner here that
    // runs the tasks in turn and sets the index itself.
    if (d->runs_here()) CHECK(d->array_index_variable() == nullptr);
    else CHECK(can.arrays == (!d->array_options(4, 0).empty() && d->array_index_variable() != nullptr));
    // A check without queueing gives a verdict only where the record says there is one.
    auto verdict = backend.test_only("/nonexistent/job.sh", {}, [](const std::vector<std::string>&) {
      return ProcessResult{0, "", "sbatch: Job 1 to start at 2026-11-29T21:00:00 using 1 processors on nodes n1"};
    });
    CHECK(verdict.has_value() == can.test_only);
    // A survey asks the scheduler (and fails here, where it is not); one that has none refuses in its own words.
    std::string error = test::error_of_call([&] { backend.survey("user", no_scheduler_here); });
    CHECK((error.find("has no scheduler to ask") == std::string::npos) == can.survey);
    if (!can.survey) CHECK(error.find("check a site of " + schedulers_with(&SchedulerCapabilities::survey)) != std::string::npos);
  }
}

TEST_CASE("a profile narrows its scheduler's capabilities and cannot widen them") {
  const SiteProfile& gadi = test::sites().get("gadi");  // PBS, whose site refuses arrays
  CHECK_FALSE(gadi.arrays);
  CHECK_FALSE(capabilities_of(gadi).arrays);
  CHECK(capabilities_of(gadi).survey);
  CHECK(capabilities_of(test::sites().get("sockeye-pbs")).arrays);
  CHECK_FALSE(capabilities_of(test::sites().get("el-capitan")).arrays);

  const std::string flux = "name: f\nscheduler: flux\nnode: {gpus: 4, cores: 96}\nlaunch: {default: flux, allowed: [flux]}\n";
  CHECK(profile_load_error(flux + "arrays: true\n") ==
        "caps.yaml:5:9: arrays: flux has no job arrays (those that have: " + schedulers_with(&SchedulerCapabilities::arrays) +
            "); write `arrays: false`, or leave it out");
  CHECK(profile_load_error(flux + "arrays: false\n") == "(no error)");
  CHECK(profile_load_error(flux) == "(no error)");
}
