// The registry of schedulers, by name and id: the built-in ones of site/schedulers.def (one line each: name,
// dialect, backend), then any a program registers at run time (scheduler/backend.h's register_scheduler; a test's
// toy scheduler). A name it does not know is refused by whoever reads it (a profile, job.json), never guessed.
// This layer knows the names; the dialects (dialect_for) and backends (backend_for) are looked up by the same id
// in their own layers.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "util/enum_names.h"

namespace hpclaunch {

// A scheduler's id: the built-in ones by name (Scheduler::slurm); a registered one past them.
enum class Scheduler : int {
#define HPCLAUNCH_SCHEDULER(name, dialect, backend) name,
#include "site/schedulers.def"
#undef HPCLAUNCH_SCHEDULER
};

// Its name ("?" for an id never given).
const char* to_string(Scheduler s);
std::optional<Scheduler> scheduler_named(std::string_view name);
// Every known scheduler's name and id, in id order (the choices a profile's `scheduler` has).
EnumNames<Scheduler> scheduler_names();
// How many are known: ids 0 .. count-1.
int scheduler_count();
// The first step of register_scheduler: a new id for `name`. Throws Error when the name is taken or empty.
Scheduler add_scheduler_name(const std::string& name);

}  // namespace hpclaunch
