# Toolchain file: cross-compiles for aarch64 (CSC Roihu's GH200 nodes, any Grace or Graviton machine) with
# Debian's cross compiler (g++-aarch64-linux-gnu) against the arm64 libraries that dpkg multiarch installs
# beside the amd64 ones (libyaml-cpp-dev:arm64 ..., see docs/install.md). Built programs run at build time
# (the man pages, the completion scripts) run under qemu-user when it is installed.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# Headers are shared between architectures in /usr/include; libraries and CMake packages are under
# /usr/lib/aarch64-linux-gnu. Never pick a program or an amd64 library from the target's paths.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /usr)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
find_program(HPCLAUNCH_QEMU_AARCH64 NAMES qemu-aarch64-static qemu-aarch64)
if(HPCLAUNCH_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${HPCLAUNCH_QEMU_AARCH64} -L /usr/aarch64-linux-gnu)
endif()
