# `cmake --install BUILD --prefix PREFIX` (docs/install.md): bin/hpclaunch (and bin/hpclaunch-train,
# bin/hpclaunch-probe from trainer/ when built), man pages and completion scripts made by the built binary, and
# the documentation; each binary and generated file only when it was built (`cmake --install` after
# `cmake --build --target hpclaunch` installs the launcher, its pages and completion). Nothing installed refers
# to the source or build tree: profiles and templates are compiled in, and rendered scripts call hpclaunch by the
# absolute path it runs from.
include(GNUInstallDirs)

set(generated_docs ${CMAKE_CURRENT_BINARY_DIR}/generated)
if(CMAKE_CROSSCOMPILING AND NOT CMAKE_CROSSCOMPILING_EMULATOR)
  message(STATUS "Cross-compiling without an emulator: no man pages or completion scripts are built "
                 "(install qemu-user-static, or run `hpclaunch man --output-dir` on the target)")
else()
  # Written by every build of the hpclaunch target (a step after its link), not by `all` alone: whatever a user
  # builds (`--target hpclaunch` in README's "On a cluster" line), `cmake --install` finds the pages of that binary.
  # A change to the script relinks hpclaunch (LINK_DEPENDS), so the pages follow it too. `--target hpclaunch_docs`
  # writes them again when they are missing. A cross build (the binary runs under its emulator, qemu-user) keeps
  # them a target of `all` of their own, as before: its `--target hpclaunch` (t0725) builds the binary alone, and
  # its install leaves the pages out.
  string(REPLACE ";" "|" emulator "${CMAKE_CROSSCOMPILING_EMULATOR}")
  set(generate_docs
    COMMAND ${CMAKE_COMMAND} -DHPCLAUNCH=$<TARGET_FILE:hpclaunch> "-DEMULATOR=${emulator}" -DOUT=${generated_docs}
            -P ${PROJECT_SOURCE_DIR}/cmake/GenerateDocs.cmake
    COMMAND ${CMAKE_COMMAND} -E touch ${generated_docs}/stamp
    COMMENT "Writing hpclaunch's man pages and completion scripts"
    VERBATIM)
  add_custom_command(OUTPUT ${generated_docs}/stamp ${generate_docs}
                     DEPENDS hpclaunch ${PROJECT_SOURCE_DIR}/cmake/GenerateDocs.cmake)
  if(CMAKE_CROSSCOMPILING)
    add_custom_target(hpclaunch_docs ALL DEPENDS ${generated_docs}/stamp)
  else()
    add_custom_target(hpclaunch_docs DEPENDS ${generated_docs}/stamp)
    add_custom_command(TARGET hpclaunch POST_BUILD ${generate_docs})
    set_property(TARGET hpclaunch APPEND PROPERTY LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/GenerateDocs.cmake)
  endif()
  # OPTIONAL: a tree whose hpclaunch was not built (only `--target hpclaunch-train`) installs what it has.
  install(DIRECTORY ${generated_docs}/man1 DESTINATION ${CMAKE_INSTALL_MANDIR} OPTIONAL)
  install(FILES ${generated_docs}/completion/hpclaunch
          DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions OPTIONAL)
  install(FILES ${generated_docs}/completion/_hpclaunch DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/site-functions
          OPTIONAL)
  install(FILES ${generated_docs}/completion/hpclaunch.fish
          DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d OPTIONAL)
endif()

install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/ARCHITECTURE.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
# The built-in profiles (compiled in) as examples to copy into ~/.config/hpclaunch/sites/, and the job specs.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/site-profiles/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/site-profiles)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
