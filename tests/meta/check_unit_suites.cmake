# unit.every_test_has_a_suite: the unit tests run as one ctest per suite (tests/CMakeLists.txt
# reads the suites from the sources); this lists the binary's tests that no suite's filter
# selects and fails if there is any, naming them.
#   cmake -DBINARY=<mcprt_unit_tests> -DFILTER=-<every suite's filter> -P check_unit_suites.cmake
execute_process(COMMAND "${BINARY}" --gtest_list_tests "--gtest_filter=${FILTER}"
                OUTPUT_VARIABLE listing RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${BINARY} --gtest_list_tests failed (${status}):\n${listing}")
endif()
# gtest lists each suite ("Suite.") with its tests indented under it.
string(REGEX MATCHALL "\n  [^\n]+" unrun "\n${listing}")
if(unrun)
  message(FATAL_ERROR "Unit tests outside every unit.<Suite> ctest (a TEST line the "
                      "configure step did not read?):\n${listing}")
endif()
message(STATUS "every unit test belongs to a unit.<Suite> ctest")
