// Warning signals before a time limit (sbatch --signal=[B:]SIG@SECONDS) and the requeue budget.
#pragma once
#include <string>
#include <string_view>

namespace hpclaunch {

// Parses "USR1@120", "B:USR1@120", "SIGUSR1@90" or "10@60" into a signal name without "SIG" ("USR1") and
// seconds. Returns false with a reason in *err.
bool parse_warning_signal(std::string_view text, std::string* name, int* seconds, std::string* err);

// A signal a program can catch, by name ("USR1", "SIGUSR1") or number, into its number. Returns false with a
// reason (and the names that would do) in *err.
bool parse_catchable_signal(std::string_view text, int* number, std::string* err);

}  // namespace hpclaunch
