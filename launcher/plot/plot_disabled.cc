// plot/plot.h in a build without PLplot (-DHPCLAUNCH_PLOT=OFF, and every static build): `hpclaunch plot` says
// that this build cannot draw and how to get one that can. cmake/StaticBuild.cmake picks this file or plot.cc.
#include "plot/plot.h"

#include "util/error.h"

namespace hpclaunch {

namespace {

[[noreturn]] void no_plotting() {
  throw failure("hpclaunch plot", "this hpclaunch was built without plotting (a static build, or HPCLAUNCH_PLOT=OFF)",
              "plot with an hpclaunch built with PLplot (`cmake -DHPCLAUNCH_PLOT=ON`, Debian libplplot-dev; "
              "`spack install hpclaunch~static`), on this machine or after copying the metrics files");
}

}  // namespace

ImageFormat image_format_for(const std::string&, const std::string&) { no_plotting(); }

void draw_panels(const std::vector<Panel>&, const std::string&, const std::string&, ImageFormat) { no_plotting(); }

}  // namespace hpclaunch
