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
  # Only the pure parsers and what they link: no trainer (LibTorch), plot, tests or installed programs.
  set(HPCLAUNCH_BUILD_TRAINER OFF)
  set(HPCLAUNCH_BUILD_TESTS OFF)
  set(HPCLAUNCH_PLOT OFF)
elseif(HPCLAUNCH_SANITIZE)
  # Any finding stops the program with a non-zero exit (UBSan would otherwise print and go on).
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()

# The files the fuzz targets reach (what their linker takes from the layers, found with -Wl,-Map): the fuzz build
# compiles only these, so that t0065's clang build stays short. A target that reaches a new file fails to link
# until it is listed here.
set(HPCLAUNCH_FUZZ_SOURCES
  launcher/util/strings.cc launcher/util/time_limit.cc launcher/util/warning_signal.cc launcher/util/file.cc
  launcher/util/shell.cc launcher/util/command.cc launcher/util/line_splitter.cc
  launcher/process/process_group.cc launcher/process/orphan_guard.cc launcher/process/signals.cc
  launcher/dialect/hostlist.cc launcher/runtime/ranks.cc launcher/util/environment.cc
  launcher/site/profile.cc launcher/site/profile_yaml.cc launcher/site/registry.cc launcher/site/schedulers.cc
  launcher/dialect/dialect.cc launcher/dialect/job_state.cc launcher/dialect/cluster.cc launcher/dialect/slurm.cc
  launcher/dialect/pbs.cc launcher/dialect/in_job.cc launcher/dialect/slurm_in_job.cc launcher/dialect/pbs_in_job.cc
  launcher/dialect/local_in_job.cc launcher/dialect/mpi_in_job.cc
  launcher/plan/job_spec.cc launcher/plan/sweep.cc
  launcher/record/job_record.cc
  launcher/scheduler/backend.cc launcher/scheduler/slurm.cc
  launcher/scheduler/pbs.cc launcher/scheduler/local.cc launcher/scheduler/local_job.cc
  launcher/metrics/records.cc launcher/jobs/run_curves.cc launcher/jobs/latest_records.cc launcher/jobs/log_filter.cc
  launcher/submit/job_index.cc
  launcher/survey/cluster_info.cc
  launcher/agent/protocol.cc launcher/agent/failure.cc
  trainer/idx_file.cc trainer/metrics_writer.cc trainer/atomic_file.cc)

# Keeps in the list `var` (absolute paths) only the files above when building for fuzzing.
function(hpclaunch_fuzz_sources var)
  if(NOT HPCLAUNCH_FUZZ)
    return()
  endif()
  set(kept)
  foreach(source IN LISTS ${var})
    file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${source})
    if(rel IN_LIST HPCLAUNCH_FUZZ_SOURCES)
      list(APPEND kept ${source})
    endif()
  endforeach()
  set(${var} ${kept} PARENT_SCOPE)
endfunction()
