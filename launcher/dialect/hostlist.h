// Slurm's compact host and task-count lists, expanded natively (what `scontrol show hostnames` prints),
// so that a task needs neither scontrol nor a controller to know the job's nodes.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace hpclaunch {

// "nid[001000-001003,001010]", "a[1-2],b3", "r[1-2]n[3-4]" (several groups: every combination, leftmost slowest,
// as Slurm does), zero padding kept ("n[08-10]" -> n08 n09 n10). Names are returned in list order, duplicates
// kept. Throws hpclaunch::Error naming the list and what is malformed (unbalanced bracket, empty range,
// descending range, non-digit bound, empty name). `where` names the variable the list came from.
std::vector<std::string> expand_hostlist(std::string_view list, std::string_view where = "hostlist");

// Slurm's tasks-per-node form: "4(x2),3" -> {4, 4, 3}. Throws hpclaunch::Error on a malformed spec.
std::vector<int> expand_tasks_per_node(std::string_view spec, std::string_view where = "tasks per node");

}  // namespace hpclaunch
