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
  # A change to the script relinks hpclaunch (LINK_DEPENDS), so the pages follow it too.
  string(REPLACE ";" "|" emulator "${CMAKE_CROSSCOMPILING_EMULATOR}")
  add_custom_command(TARGET hpclaunch POST_BUILD
    COMMAND ${CMAKE_COMMAND} -DHPCLAUNCH=$<TARGET_FILE:hpclaunch> "-DEMULATOR=${emulator}" -DOUT=${generated_docs}
            -P ${PROJECT_SOURCE_DIR}/cmake/GenerateDocs.cmake
    COMMAND ${CMAKE_COMMAND} -E touch ${generated_docs}/stamp
    COMMENT "Writing hpclaunch's man pages and completion scripts"
    VERBATIM)
  set_property(TARGET hpclaunch APPEND PROPERTY LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/GenerateDocs.cmake)
  add_custom_target(hpclaunch_docs)  # the name scripts know: building it builds hpclaunch, which writes them
  add_dependencies(hpclaunch_docs hpclaunch)
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
