# ctest package.subproject (see CMakeLists.txt): a C++17 project embeds this source tree with
# add_subdirectory() (subproject/CMakeLists.txt), builds the example agent and runs it.
include("${CMAKE_CURRENT_LIST_DIR}/package_test_support.cmake")

file(REMOVE_RECURSE "${WORK_DIR}")
# An empty CMAKE_BUILD_TYPE, the case where mcprt as the top project would set its own
# default, and -O0 without -g. The parent builds as one unity batch per target
# (CMAKE_UNITY_BUILD, a setting mcprt's sources must survive: no two source files' internal
# helpers may share a name): the test's CPU time (user + sys) was 417 s with one source
# file at a time, 130 s in batches of 14, 108 s in one batch per library.
run("configuring the consumer"
    COMMAND ${CMAKE_COMMAND} -S "${CMAKE_CURRENT_LIST_DIR}/subproject" -B "${WORK_DIR}/build"
            ${MCPRT_CONSUMER_CMAKE_ARGS} -DCMAKE_BUILD_TYPE= -DCMAKE_CXX_FLAGS=-O0
            -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=0
            "-DMCPRT_SOURCE_DIR=${MCPRT_SOURCE_DIR}")

# What mcprt decided as a subproject, from the consumer's cache.
file(STRINGS "${WORK_DIR}/build/CMakeCache.txt" cache)
foreach(entry "CMAKE_BUILD_TYPE:STRING=" "MCPRT_BUILD_TESTS:BOOL=OFF" "MCPRT_BUILD_DEMO:BOOL=OFF"
              "MCPRT_BUILD_BENCH:BOOL=OFF" "MCPRT_INSTALL:BOOL=OFF")
  if(NOT entry IN_LIST cache)
    string(REGEX MATCH "[^:]*" name "${entry}")
    list(FILTER cache INCLUDE REGEX "^${name}:")
    message(FATAL_ERROR "the consumer's cache has ${cache}, expected ${entry}")
  endif()
endforeach()
list(FILTER cache INCLUDE REGEX "^(CLI11_DIR|HTTPLIB_FOUND):")
if(cache)
  message(FATAL_ERROR "CLI11 or cpp-httplib was looked for although nothing here uses it: ${cache}")
endif()

run("building the agent (and only what it needs)"
    COMMAND ${CMAKE_COMMAND} --build "${WORK_DIR}/build" --target agent -j ${MCPRT_JOBS})
run_agent("the subproject's agent" "${WORK_DIR}/build/agent" "${WORK_DIR}/run")
message(STATUS "package.subproject: built as a C++17 subproject (no build type) and ran")
