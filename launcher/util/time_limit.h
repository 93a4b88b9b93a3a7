// Wall-clock limits in the forms sbatch accepts: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace hpclaunch {

// Seconds, or nullopt when `text` is not one of the forms above (or is zero, or past the largest sbatch takes:
// 4294967293 minutes).
std::optional<long> parse_time_limit(std::string_view text);
// "HH:MM:SS", or "D-HH:MM:SS" past a day: what #SBATCH --time gets.
std::string format_slurm_time(long seconds);
// "HH:MM:SS" with hours past 24 as needed: what PBS walltime= gets.
std::string format_pbs_time(long seconds);

}  // namespace hpclaunch
