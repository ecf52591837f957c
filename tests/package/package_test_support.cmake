# Shared by install_test.cmake and subproject_test.cmake (cmake -P scripts).
cmake_minimum_required(VERSION 3.20)  # policies of a -P script (IN_LIST…)

# run(<what> [EXPECT_FAILURE] COMMAND <cmd...>): runs the command; fails the test with its
# output when it fails (or, with EXPECT_FAILURE, when it succeeds). Its stdout+stderr are
# left in RUN_OUTPUT.
function(run what)
  cmake_parse_arguments(PARSE_ARGV 1 arg "EXPECT_FAILURE" "" "COMMAND")
  execute_process(COMMAND ${arg_COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE out TIMEOUT 600)
  if(arg_EXPECT_FAILURE AND rc EQUAL 0)
    message(FATAL_ERROR "${what}: succeeded, but should have failed:\n${out}")
  elseif(NOT arg_EXPECT_FAILURE AND NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${arg_COMMAND}")
    message(FATAL_ERROR "${what} failed (${rc}):\n  ${cmd}\n${out}")
  endif()
  set(RUN_OUTPUT "${out}" PARENT_SCOPE)
endfunction()

# run_side_by_side(<what> FIRST <cmd...> SECOND <cmd...>): runs both commands at the same
# time (execute_process runs its COMMANDs concurrently, as a pipeline: FIRST's stdout goes
# to SECOND's stdin, so FIRST must be one that writes only to stderr, as a compiler does;
# SECOND ignores its stdin); fails the test unless both succeed.
function(run_side_by_side what)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "FIRST;SECOND")
  execute_process(COMMAND ${arg_FIRST} COMMAND ${arg_SECOND} RESULTS_VARIABLE rcs
                  OUTPUT_VARIABLE out ERROR_VARIABLE out TIMEOUT 600)
  if(NOT rcs STREQUAL "0;0")
    string(REPLACE ";" " " first "${arg_FIRST}")
    string(REPLACE ";" " " second "${arg_SECOND}")
    message(FATAL_ERROR "${what} failed (${rcs}):\n  ${first}\n  ${second}\n${out}")
  endif()
endfunction()

# expect_in(<what> <text> <needle>...): fails the test unless each needle is in text.
function(expect_in what text)
  foreach(needle IN LISTS ARGN)
    string(FIND "${text}" "${needle}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${what}: \"${needle}\" not found in:\n${text}")
    endif()
  endforeach()
endfunction()

# The launcher (ccache, when the tree has one) and the compiler of the tree under test.
set(MCPRT_CXX_COMMAND ${MCPRT_CXX_COMPILER_LAUNCHER} ${MCPRT_CXX_COMPILER})
set(MCPRT_CONSUMER_CMAKE_ARGS -G "${MCPRT_GENERATOR}" -DCMAKE_CXX_COMPILER=${MCPRT_CXX_COMPILER})
if(MCPRT_CXX_COMPILER_LAUNCHER)
  list(APPEND MCPRT_CONSUMER_CMAKE_ARGS -DCMAKE_CXX_COMPILER_LAUNCHER=${MCPRT_CXX_COMPILER_LAUNCHER})
endif()
# Two compile jobs, as CI's build: the machine's two cores are what CI has.
set(MCPRT_JOBS 2)

# run_agent(<what> <agent> <work-dir>): runs the example agent against a config with the demo
# server (HOME and the XDG dirs inside <work-dir>: nothing of the user's is read or
# written) and checks that it listed the demo tools and printed the call's result.
function(run_agent what agent work)
  file(MAKE_DIRECTORY "${work}/home")
  file(WRITE "${work}/mcp.json"
       "{\"mcpServers\": {\"demo\": {\"command\": \"${MCPRT_DEMO_SERVER}\"}}}\n")
  run("${what}" COMMAND ${CMAKE_COMMAND} -E env "HOME=${work}/home" "XDG_CONFIG_HOME=${work}/home/.config"
                        "XDG_CACHE_HOME=${work}/home/.cache" --unset=MCPRT_TIMEOUT_MS
                        "${agent}" "${work}/mcp.json")
  expect_in("${what}" "${RUN_OUTPUT}" "mcp_demo_echo\n" "mcp_demo_slow_task\n" "mcp_demo_add -> 5\n")
endfunction()
