# HPCLAUNCH_FUZZ (docs/fuzzing.md): one clang build, ASan + UBSan and the fuzzer's coverage in every library, so that
# a bug in a parser is caught where it happens, not where its result is used. It serves two tests: t0065 runs the
# fuzz targets, and t0060 the unit tests (HPCLAUNCH_BUILD_TESTS=ON builds them with the same flags).
if(HPCLAUNCH_FUZZ)
  # libFuzzer comes with clang (Debian: clang, libclang-rt-14-dev); GCC has no -fsanitize=fuzzer.
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "HPCLAUNCH_FUZZ needs clang (libFuzzer), not ${CMAKE_CXX_COMPILER_ID}: "
                        "configure with -DCMAKE_CXX_COMPILER=clang++, or run scripts/fuzz.sh")
  endif()
  # Coverage for the fuzzer in every library; the fuzz targets link libFuzzer's main (fuzz/CMakeLists.txt).
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  # -O1 as libFuzzer advises, line tables only (a shorter build; traces still name file:line), and assertions on
  # (nlohmann::json's among them) whatever the build type says.
  add_compile_options(-O1 -gline-tables-only -UNDEBUG)
  add_link_options(-fsanitize=address,undefined)
  # The launcher's layers and the unit tests: no trainer (LibTorch's libraries are not instrumented), plot or
  # installed programs. The libraries are whole (no list of the files a target reaches, which a new file broke):
  # each target, built alone (scripts/fuzz.sh, t0060), pulls in only the libraries it links.
  set(HPCLAUNCH_BUILD_TRAINER OFF)
  set(HPCLAUNCH_PLOT OFF)
endif()
