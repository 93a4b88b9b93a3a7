#include <doctest/doctest.h>

#include <set>

#include "test_util.h"

#include "runtime/rendezvous.h"
#include "util/error.h"

namespace rendezvous_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

namespace {

Resolver table(std::map<std::string, std::string> names) {
  return [names](const std::string& host) -> std::optional<std::string> {
    auto it = names.find(host);
    if (it == names.end()) return std::nullopt;
    return it->second;
  };
}
const Resolver k_jsc = table({{"jwb0001", "10.1.0.1"}, {"jwb0001i", "10.2.0.1"}, {"jwb0005", "10.1.0.5"}});
const std::vector<std::string> k_step = {"jwb0001", "jwb0002"};
const std::vector<std::string> k_job = {"jwb0005", "jwb0001", "jwb0002"};

std::string error_of(const std::function<void()>& f) { return test::error_of_call(f); }

}  // namespace

TEST_SUITE_BEGIN("rendezvous");

TEST_CASE("the profile's rule comes from HPCLAUNCH_MASTER_ADDR_*") {
  MasterAddrPolicy p = master_addr_policy_from_env({{"HPCLAUNCH_MASTER_ADDR_RULE", "batch-host"},
                                                    {"HPCLAUNCH_MASTER_ADDR_SUFFIX", "i"},
                                                    {"HPCLAUNCH_MASTER_ADDR_RESOLVE", "1"}});
  CHECK(p.rule == MasterAddrRule::batch_host);
  CHECK(p.suffix == "i");
  CHECK(p.resolve);
  p = master_addr_policy_from_env({});
  CHECK(p.rule == MasterAddrRule::first_node);
  CHECK_FALSE(p.resolve);
  CHECK(error_of([] { master_addr_policy_from_env({{"HPCLAUNCH_MASTER_ADDR_RULE", "first_node"}}); }) ==
        "HPCLAUNCH_MASTER_ADDR_RULE: unknown master address rule 'first_node' (did you mean 'first-node'?); use "
        "first-node, batch-host or fixed");
  CHECK(error_of([] { master_addr_policy_from_env({{"HPCLAUNCH_MASTER_ADDR_RESOLVE", "yes"}}); })
            .rfind("HPCLAUNCH_MASTER_ADDR_RESOLVE: 'yes' is not 0 or 1", 0) == 0);
}

TEST_CASE("a local job with no rule uses loopback: its emulated node names do not resolve") {
  MasterAddrPolicy p = master_addr_policy_from_env({{"HPCLAUNCH_LOCAL_JOB", "1"}});
  CHECK(p.rule == MasterAddrRule::fixed);
  CHECK(p.fixed == "127.0.0.1");
  p = master_addr_policy_from_env({{"HPCLAUNCH_LOCAL_JOB", "1"}, {"HPCLAUNCH_MASTER_ADDR_RULE", "first-node"}});
  CHECK(p.rule == MasterAddrRule::first_node);
}

TEST_CASE("first-node takes the step's first node, batch-host the job's") {
  CHECK(master_addr_by_rule({}, k_step, k_job, k_jsc) == "jwb0001");
  CHECK(master_addr_by_rule({MasterAddrRule::batch_host, "", false, ""}, k_step, k_job, k_jsc) == "jwb0005");
}

TEST_CASE("JSC: first node plus suffix i, resolved to the InfiniBand address") {
  CHECK(master_addr_by_rule({MasterAddrRule::first_node, "i", true, ""}, k_step, k_job, k_jsc) == "10.2.0.1");
  CHECK(master_addr_by_rule({MasterAddrRule::first_node, "i", false, ""}, k_step, k_job, k_jsc) == "jwb0001i");
}

TEST_CASE("a name that does not resolve is an error naming it") {
  CHECK(error_of([] { master_addr_by_rule({MasterAddrRule::first_node, "-ib", true, ""}, k_step, k_job, k_jsc); }) ==
        "MASTER_ADDR: 'jwb0001-ib' (the first-node rule's host 'jwb0001' + suffix '-ib') does not resolve to an "
        "IPv4 address; check HPCLAUNCH_MASTER_ADDR_SUFFIX, or pass --master-addr ADDRESS");
}

TEST_CASE("fixed uses its address; an empty one is an error") {
  Resolver loopback = table({{"127.0.0.1", "127.0.0.1"}});
  CHECK(master_addr_by_rule({MasterAddrRule::fixed, "", false, "127.0.0.1"}, {}, {}, loopback) == "127.0.0.1");
  CHECK(error_of([&] { master_addr_by_rule({MasterAddrRule::fixed, "", false, ""}, {}, {}, loopback); })
            .rfind("HPCLAUNCH_MASTER_ADDR_FIXED: empty", 0) == 0);
}

TEST_CASE("without a node list the rule cannot choose and says what to do") {
  CHECK(error_of([] { master_addr_by_rule({}, {}, {}, k_jsc); }).find("export MASTER_ADDR") != std::string::npos);
}

TEST_CASE("an existing MASTER_ADDR wins over the flag, the flag over the rule") {
  CHECK(choose_master_addr({{"MASTER_ADDR", "10.9.9.9"}}, std::string("10.0.0.1"), {}, k_step, k_job, k_jsc) ==
        "10.9.9.9");
  CHECK(choose_master_addr({}, std::string("10.0.0.1"), {}, k_step, k_job, k_jsc) == "10.0.0.1");
  CHECK(choose_master_addr({}, std::nullopt, {}, k_step, k_job, k_jsc) == "jwb0001");
}

TEST_CASE("master_addr_from_env reads the node lists only when it needs them") {
  FileReader no_files = [](const std::string& path) -> std::string { throw Error(path, "not readable here"); };
  Env slurm = {{"SLURM_JOB_ID", "5"}, {"SLURM_JOB_NODELIST", "jwb[0005,0001-0002]"}, {"SLURM_STEP_NODELIST", "jwb[0001-0002]"},
               {"HPCLAUNCH_MASTER_ADDR_SUFFIX", "i"}, {"HPCLAUNCH_MASTER_ADDR_RESOLVE", "1"}};
  CHECK(master_addr_from_env(slurm, std::nullopt, no_files, k_jsc) == "10.2.0.1");
  Env pbs = {{"PBS_JOBID", "1.pbshost"}, {"PBS_NODEFILE", "/var/spool/pbs/aux/1.pbshost"}, {"MASTER_ADDR", "cn01"}};
  CHECK(master_addr_from_env(pbs, std::nullopt, no_files, k_jsc) == "cn01");
  pbs.erase("MASTER_ADDR");
  CHECK(master_addr_from_env(pbs, std::string("cn02"), no_files, k_jsc) == "cn02");
  CHECK_THROWS_AS(master_addr_from_env(pbs, std::nullopt, no_files, k_jsc), Error);
}

TEST_CASE("the derived port follows the documented formula") {
  CHECK(derive_master_port("4242") == 24242);
  CHECK(derive_master_port("123456") == 23456);
  CHECK(derive_master_port("4242_7") == 24242);        // array task: the leading digits
  CHECK(derive_master_port("12.pbshost") == 20012);    // PBS
  CHECK(derive_master_port("") == k_master_port_no_job);
  int hashed = derive_master_port("local-1732189200-4242");
  CHECK(hashed >= 20000);
  CHECK(hashed <= 29999);
  CHECK(hashed == derive_master_port("local-1732189200-4242"));
  CHECK(derive_master_port("4243") != derive_master_port("4242"));  // neighbouring jobs do not collide
}

TEST_CASE("the agent's worker ports lie between the derived ports and the kernel's ephemeral ones") {
  PortBand band = worker_port_band("32768\t60999\n");
  CHECK(band.low == 30000);
  CHECK(band.high == 32768);
  CHECK(band.low >= k_master_port_base + k_master_port_span);  // above every derived port
  band = worker_port_band("40000 65000");
  CHECK(band.high == 40000);
  // unreadable, nonsense, or too few ports below the ephemeral range: no band (the kernel picks)
  for (const char* text : {"", "x 6", "30050\t60999", "1024 60999", "70000 80000"}) {
    CAPTURE(text);
    band = worker_port_band(text);
    CHECK(band.low == band.high);
  }
}

TEST_CASE("MASTER_PORT: existing, then flag, then profile default, then derived") {
  CHECK(choose_master_port({{"MASTER_PORT", "12345"}, {"HPCLAUNCH_MASTER_PORT", "29500"}}, 7000, "42") == 12345);
  CHECK(choose_master_port({{"HPCLAUNCH_MASTER_PORT", "29500"}}, 7000, "42") == 7000);
  CHECK(choose_master_port({{"HPCLAUNCH_MASTER_PORT", "29500"}}, std::nullopt, "42") == 29500);
  CHECK(choose_master_port({}, std::nullopt, "42") == 20042);
  CHECK(error_of([] { choose_master_port({{"MASTER_PORT", "70000"}}, std::nullopt, "1"); }) ==
        "MASTER_PORT: '70000' is not a port number (1-65535); pass a free TCP port, e.g. 29500");
  CHECK(error_of([] { choose_master_port({}, 0, "1"); }).rfind("--master-port: '0' is not a port", 0) == 0);
}

TEST_CASE("array tasks get the array's port plus their index, so tasks sharing a node never collide") {
  // Slurm: every task has its own SLURM_JOB_ID; the array's id is the base.
  CHECK(choose_master_port({{"HPCLAUNCH_ARRAY_TASK", "0"}, {"SLURM_JOB_ID", "4242"}, {"SLURM_ARRAY_JOB_ID", "4242"},
                           {"SLURM_ARRAY_TASK_ID", "0"}}, std::nullopt, "4242") == 24242);
  CHECK(choose_master_port({{"HPCLAUNCH_ARRAY_TASK", "3"}, {"SLURM_JOB_ID", "4250"}, {"SLURM_ARRAY_JOB_ID", "4242"},
                           {"SLURM_ARRAY_TASK_ID", "3"}}, std::nullopt, "4250") == 24245);
  // PBS: the subjob's id starts with the array's number; local: every task has the array's id.
  CHECK(choose_master_port({{"HPCLAUNCH_ARRAY_TASK", "2"}}, std::nullopt, "4242[2].pbshost") == 24244);
  std::set<int> ports;
  for (int t = 0; t < 100; ++t)
    ports.insert(choose_master_port({{"HPCLAUNCH_ARRAY_TASK", std::to_string(t)}}, std::nullopt, "local-1732189200-4242"));
  CHECK(ports.size() == 100);
  CHECK(*ports.begin() >= 20000);
  CHECK(*ports.rbegin() <= 29999);
  // Wrapping stays in the span.
  CHECK(choose_master_port({{"HPCLAUNCH_ARRAY_TASK", "2"}}, std::nullopt, "9999") == 20001);
  // A profile's fixed port moves by the index too; what the user set does not.
  CHECK(choose_master_port({{"HPCLAUNCH_ARRAY_TASK", "2"}, {"HPCLAUNCH_MASTER_PORT", "29500"}}, std::nullopt, "1") == 29502);
  CHECK(choose_master_port({{"HPCLAUNCH_ARRAY_TASK", "2"}, {"MASTER_PORT", "12345"}}, std::nullopt, "1") == 12345);
  CHECK(choose_master_port({{"HPCLAUNCH_ARRAY_TASK", "2"}}, 7000, "1") == 7000);
  CHECK(error_of([] { choose_master_port({{"HPCLAUNCH_ARRAY_TASK", "x"}}, std::nullopt, "1"); }) ==
        "HPCLAUNCH_ARRAY_TASK: 'x' is not an array task index (0-9999); it is set by hpclaunch's array script; unset it "
        "outside one");
  CHECK(error_of([] { choose_master_port({{"HPCLAUNCH_ARRAY_TASK", "1"}, {"HPCLAUNCH_MASTER_PORT", "65535"}}, std::nullopt, "1"); })
            .rfind("HPCLAUNCH_MASTER_PORT + HPCLAUNCH_ARRAY_TASK: '65536' is not a port", 0) == 0);
}

TEST_SUITE_END();

}  // namespace rendezvous_test
