# Toolchain file: cross-compiles for aarch64 (CSC Roihu's GH200 nodes, any Grace or Graviton machine) with
# Debian's cross compiler (g++-aarch64-linux-gnu: its C and C++ runtimes are in /usr/aarch64-linux-gnu) against
# Debian's arm64 -dev packages unpacked into a sysroot by scripts/aarch64-sysroot.sh (docs/install.md, "aarch64").
# Built programs run at build time (the man pages, the completion scripts) run under qemu-user when installed.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

# Where scripts/aarch64-sysroot.sh unpacked the arm64 packages (scripts/install-deps.sh puts them in /opt).
set(HPCLAUNCH_AARCH64_SYSROOT /opt/hpclaunch/aarch64-sysroot CACHE PATH "Debian's arm64 -dev packages, unpacked")
# Try-compiles get a toolchain file of their own: hand them the sysroot too.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES HPCLAUNCH_AARCH64_SYSROOT)
if(NOT EXISTS "${HPCLAUNCH_AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu/cmake/yaml-cpp")
  message(FATAL_ERROR "No arm64 sysroot in ${HPCLAUNCH_AARCH64_SYSROOT}: run scripts/aarch64-sysroot.sh "
                      "${HPCLAUNCH_AARCH64_SYSROOT}, or pass -DHPCLAUNCH_AARCH64_SYSROOT=DIR")
endif()

# Libraries and CMake packages from the sysroot first; the arch-independent headers and CMake packages
# (CLI11, nlohmann-json, kainjow mustache) from the build machine's /usr. Never an amd64 library (those are
# under /usr/lib/x86_64-linux-gnu, which CMAKE_LIBRARY_ARCHITECTURE keeps out), never a program from the target.
set(CMAKE_FIND_ROOT_PATH "${HPCLAUNCH_AARCH64_SYSROOT}" /usr/aarch64-linux-gnu /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# The arm64 headers (OpenSSL's configuration.h is per architecture) before the build machine's /usr/include.
include_directories(BEFORE SYSTEM "${HPCLAUNCH_AARCH64_SYSROOT}/usr/include/aarch64-linux-gnu"
                    "${HPCLAUNCH_AARCH64_SYSROOT}/usr/include")
# pkg-config (hwloc) reads the sysroot's .pc files and prefixes their paths with it.
set(ENV{PKG_CONFIG_LIBDIR} "${HPCLAUNCH_AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${HPCLAUNCH_AARCH64_SYSROOT}")

find_program(HPCLAUNCH_QEMU_AARCH64 NAMES qemu-aarch64-static qemu-aarch64)
if(HPCLAUNCH_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${HPCLAUNCH_QEMU_AARCH64} -L /usr/aarch64-linux-gnu)
endif()
