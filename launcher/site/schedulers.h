// The registry of schedulers, by name and id: one per folder of launcher/schedulers/ (the build writes their
// list, hpclaunch_schedulers.def: launcher/schedulers/registry.cmake), then any a program registers at run time
// (scheduler/backend.h's register_scheduler; a test's toy scheduler). A name it does not know is refused by whoever reads it (a profile, job.json), never guessed.
// This layer knows the names; the dialects (dialect_for) and backends (backend_for) are looked up by the same id
// in their own layers.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "util/enum_names.h"

namespace hpclaunch {

// A scheduler's id: those of the scheduler folders by name (Scheduler::slurm), in name order; a registered one past
// them. An id is a handle, nothing more: no order of the ids means anything (innermost-first: all_dialects).
enum class Scheduler : int {
#define HPCLAUNCH_SCHEDULER(name, dialect, backend) name,
#include "hpclaunch_schedulers.def"
#undef HPCLAUNCH_SCHEDULER
};

// Its name ("?" for an id never given).
const char* to_string(Scheduler s);
std::optional<Scheduler> scheduler_named(std::string_view name);
// Every known scheduler's name and id, in name order (the choices a profile's `scheduler` has).
EnumNames<Scheduler> scheduler_names();
// The first step of register_scheduler: a new id for `name`. Throws Error when the name is taken or empty.
Scheduler add_scheduler_name(const std::string& name);

}  // namespace hpclaunch
