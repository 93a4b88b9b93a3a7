// Drawing the panels of plot/panels.h into a PNG or SVG file with PLplot (cairo devices pngcairo, svgcairo).
#pragma once
#include <string>
#include <vector>

#include "plot/panels.h"

namespace hpclaunch {

enum class ImageFormat { png, svg };

// The format `path`'s extension names (.png, .svg); throws Error naming `where` for any other.
ImageFormat image_format_for(const std::string& path, const std::string& where);

// Draws the eight panels (4 rows x 2 columns) with a title line into `path`. Throws Error naming the path when
// it cannot be written.
void draw_panels(const std::vector<Panel>& panels, const std::string& title, const std::string& path,
                 ImageFormat format);

}  // namespace hpclaunch
