#include "cli/commands.h"
#include "util/error.h"
namespace hpclaunch {
int cmd_submit(const Args&) { throw failure("submit", "not implemented yet"); }
int cmd_render(const Args&) { throw failure("render", "not implemented yet"); }
int cmd_sites(const Args&) { throw failure("sites", "not implemented yet"); }
}
