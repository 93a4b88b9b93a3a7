# cmake -DHPCLAUNCH=bin [-DEMULATOR=a|b] -DOUT=dir -P GenerateDocs.cmake: the built hpclaunch writes its man pages
# (OUT/man1/*.1) and completion scripts (OUT/completion/{hpclaunch,_hpclaunch,hpclaunch.fish}) from its own
# command table and --help texts, so they cannot drift from the binary they are installed with.
string(REPLACE "|" ";" emulator "${EMULATOR}")
file(REMOVE_RECURSE "${OUT}/man1")
execute_process(COMMAND ${emulator} "${HPCLAUNCH}" man --output-dir "${OUT}/man1"
                OUTPUT_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "`hpclaunch man --output-dir ${OUT}/man1` failed (${rc})")
endif()
file(MAKE_DIRECTORY "${OUT}/completion")
foreach(pair "bash|hpclaunch" "zsh|_hpclaunch" "fish|hpclaunch.fish")
  string(REPLACE "|" ";" pair "${pair}")
  list(GET pair 0 shell)
  list(GET pair 1 file)
  execute_process(COMMAND ${emulator} "${HPCLAUNCH}" completion ${shell}
                  OUTPUT_FILE "${OUT}/completion/${file}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "`hpclaunch completion ${shell}` failed (${rc})")
  endif()
endforeach()
