# HPCLAUNCH_FUZZ and HPCLAUNCH_SANITIZE (docs/fuzzing.md). Both instrument every library, so that a bug in a
# parser is caught where it happens, not where its result is used.
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
  # Only the pure parsers and what they link: no trainer (LibTorch), plot, tests or installed programs. The
  # libraries are whole (no list of the files a target reaches, which a new file broke): the fuzz targets, built
  # alone (scripts/fuzz.sh), pull in only the libraries they link (fuzz/CMakeLists.txt).
  set(HPCLAUNCH_BUILD_TRAINER OFF)
  set(HPCLAUNCH_BUILD_TESTS OFF)
  set(HPCLAUNCH_PLOT OFF)
elseif(HPCLAUNCH_SANITIZE)
  # Any finding stops the program with a non-zero exit (UBSan would otherwise print and go on).
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
