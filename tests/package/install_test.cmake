# ctest package.install (see CMakeLists.txt): installs the tree under test into a fresh
# prefix (checking that every file is there, the CLI's man page and completion scripts
# included) and builds and runs examples/cpp against it, through the CMake package and
# through the pkg-config file.
include("${CMAKE_CURRENT_LIST_DIR}/package_test_support.cmake")

file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
run("cmake --install" COMMAND ${CMAKE_COMMAND} --install "${MCPRT_BUILD_DIR}" --prefix "${prefix}")
foreach(installed bin/mcprt bin/mcprt-demo-server include/mcprt/mcprt.hpp include/mcprt/version.hpp
                  include/mcprt/native/host.hpp ${MCPRT_INSTALL_LIBDIR}/libmcprt_core.a
                  ${MCPRT_INSTALL_LIBDIR}/libmcprt_native.a
                  ${MCPRT_INSTALL_LIBDIR}/cmake/mcprt/mcprtConfig.cmake
                  ${MCPRT_INSTALL_LIBDIR}/cmake/mcprt/mcprtConfigVersion.cmake
                  ${MCPRT_INSTALL_LIBDIR}/pkgconfig/mcprt.pc
                  share/bash-completion/completions/mcprt share/zsh/vendor-completions/_mcprt
                  share/fish/vendor_completions.d/mcprt.fish ${MCPRT_MAN_PAGE})
  if(NOT EXISTS "${prefix}/${installed}")
    message(FATAL_ERROR "cmake --install did not install ${installed}")
  endif()
endforeach()
# The installed demo server, from here on.
set(MCPRT_DEMO_SERVER "${prefix}/bin/mcprt-demo-server")

# examples/cpp as a user builds it: find_package(mcprt CONFIG REQUIRED) from the prefix. No
# build type (no -O, no -g: cheap) and no C++ standard (g++'s default is C++17): the
# package's cxx_std_20 must raise it, and its find_dependency calls must bring every
# library the static libraries need.
run("configuring examples/cpp against the installed package"
    COMMAND ${CMAKE_COMMAND} -S "${MCPRT_SOURCE_DIR}/examples/cpp" -B "${WORK_DIR}/example"
            ${MCPRT_CONSUMER_CMAKE_ARGS} -DCMAKE_BUILD_TYPE= "-DCMAKE_PREFIX_PATH=${prefix}")

# The same agent, one compiler line with the pkg-config file.
run("pkg-config --cflags --libs --static mcprt"
    COMMAND ${CMAKE_COMMAND} -E env "PKG_CONFIG_PATH=${prefix}/${MCPRT_INSTALL_LIBDIR}/pkgconfig"
            ${MCPRT_PKG_CONFIG} --cflags --libs --static mcprt)
string(STRIP "${RUN_OUTPUT}" pc_flags)
expect_in("pkg-config flags" " ${pc_flags} " "-I${prefix}/" "-lmcprt_native " "-lmcprt_core "
          "-lboost_filesystem " "-lcurl " "-lspdlog " "-lcrypto "
          "-ltomlplusplus ")
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")

# Both builds are one translation unit and one link each: side by side they take the two
# cores (most of this test's time).
run_side_by_side("building examples/cpp (CMake package) and compiling it with the pkg-config flags"
  FIRST ${MCPRT_CXX_COMMAND} -std=c++20 "${MCPRT_SOURCE_DIR}/examples/cpp/agent.cpp" ${pc_flags}
        -o "${WORK_DIR}/agent-pkg-config"
  SECOND ${CMAKE_COMMAND} --build "${WORK_DIR}/example")
run_agent("examples/cpp (CMake package)" "${WORK_DIR}/example/agent" "${WORK_DIR}/cmake-run")
run_agent("examples/cpp (pkg-config)" "${WORK_DIR}/agent-pkg-config" "${WORK_DIR}/pkg-config-run")

# Without C++20 (a plain compiler line; CMake consumers get it from the targets) the first
# error says what is missing (-Wfatal-errors: nothing comes before it).
run("compiling the agent as C++17" EXPECT_FAILURE
    COMMAND ${MCPRT_CXX_COMPILER} -std=c++17 -fsyntax-only -Wfatal-errors
            "${MCPRT_SOURCE_DIR}/examples/cpp/agent.cpp" "-I${prefix}/include")
expect_in("compiling the agent as C++17" "${RUN_OUTPUT}"
          "error: #error \"mcprt needs C++20: compile with -std=c++20")
message(STATUS "package.install: installed, built through the CMake package and pkg-config, ran twice")
