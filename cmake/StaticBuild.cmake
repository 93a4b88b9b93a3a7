# HPCLAUNCH_STATIC and HPCLAUNCH_PLOT (docs/install.md). A static hpclaunch is the launcher alone, linked with
# glibc's, libstdc++'s and Debian's static archives (libyaml-cpp.a, libboost_filesystem.a, libcrypto.a); Debian's libfmt-dev
# has no libfmt.a, so fmt's compiled part is built here (hpclaunch_fmt_target below). PLplot has no static archive in Debian (and its cairo
# drivers are loaded at run time), so `plot` is left out and says how to get it (plot/plot_disabled.cc).
if(HPCLAUNCH_STATIC)
  set(Boost_USE_STATIC_LIBS ON)
  set(OPENSSL_USE_STATIC_LIBS TRUE)  # libcrypto.a (Debian libssl-dev)
  if(HPCLAUNCH_PLOT)
    message(STATUS "HPCLAUNCH_STATIC: building without `hpclaunch plot` (PLplot cannot be linked statically)")
  endif()
  set(HPCLAUNCH_PLOT OFF)
  set(HPCLAUNCH_BUILD_TRAINER OFF)
endif()

# The fmt every layer links (after find_package(fmt)): Debian's libfmt.so, or for a static hpclaunch fmt's compiled
# part as a static library of ours (cmake/static/fmt_library.cc), with fmt::fmt's own compile definitions, so that
# every other object of a static build is compiled exactly as in a dynamic build of the same type and comes from
# ccache (t0720 after the main build: a link, not a second compile of the launcher).
function(hpclaunch_fmt_target out)
  if(NOT HPCLAUNCH_STATIC)
    set(${out} fmt::fmt PARENT_SCOPE)
    return()
  endif()
  add_library(hpclaunch_fmt STATIC ${PROJECT_SOURCE_DIR}/cmake/static/fmt_library.cc)
  target_include_directories(hpclaunch_fmt PUBLIC $<TARGET_PROPERTY:fmt::fmt,INTERFACE_INCLUDE_DIRECTORIES>)
  target_compile_definitions(hpclaunch_fmt PUBLIC $<TARGET_PROPERTY:fmt::fmt,INTERFACE_COMPILE_DEFINITIONS>)
  set(${out} hpclaunch_fmt PARENT_SCOPE)
endfunction()

# plot/ has two implementations of plot/plot.h: plot.cc (PLplot) and plot_disabled.cc (says there is none).
function(hpclaunch_plot_sources target)
  get_target_property(sources ${target} SOURCES)
  if(HPCLAUNCH_PLOT)
    list(FILTER sources EXCLUDE REGEX "/plot/plot_disabled\\.cc$")
  else()
    list(FILTER sources EXCLUDE REGEX "/plot/plot\\.cc$")
  endif()
  set_target_properties(${target} PROPERTIES SOURCES "${sources}")
endfunction()

# Links `target` with -static, pointing Debian's yaml-cpp target and pkg-config's hwloc target (both imported as
# the .so) at libyaml-cpp.a and libhwloc.a, with stand-ins for the libudev calls of libhwloc.a (Debian has no
# libudev.a; cmake/static/no_udev.cc).
function(hpclaunch_static_link target)
  if(NOT HPCLAUNCH_STATIC)
    return()
  endif()
  find_library(HPCLAUNCH_YAML_CPP_STATIC NAMES libyaml-cpp.a REQUIRED)
  get_target_property(configs yaml-cpp IMPORTED_CONFIGURATIONS)
  foreach(config IN LISTS configs)
    set_target_properties(yaml-cpp PROPERTIES IMPORTED_LOCATION_${config} ${HPCLAUNCH_YAML_CPP_STATIC}
                                              IMPORTED_SONAME_${config} "")
  endforeach()
  set_target_properties(yaml-cpp PROPERTIES IMPORTED_LOCATION ${HPCLAUNCH_YAML_CPP_STATIC})
  find_library(HPCLAUNCH_HWLOC_STATIC NAMES libhwloc.a HINTS ${HWLOC_LIBRARY_DIRS} REQUIRED)
  set_target_properties(PkgConfig::HWLOC PROPERTIES INTERFACE_LINK_LIBRARIES "${HPCLAUNCH_HWLOC_STATIC};m")
  target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/cmake/static/no_udev.cc)
  target_link_options(${target} PRIVATE -static)
endfunction()
