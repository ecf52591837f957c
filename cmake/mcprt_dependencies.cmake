# Dependencies come from Debian's packages. In the Emscripten build only header-only
# libraries are used, exposed through a folder of symlinks (never -I/usr/include, whose
# glibc headers would take over).
if(EMSCRIPTEN)
  set(MCPRT_HOSTINC "${CMAKE_BINARY_DIR}/hostinc")
  file(MAKE_DIRECTORY "${MCPRT_HOSTINC}")
  foreach(d nlohmann)
    if(NOT EXISTS "${MCPRT_HOSTINC}/${d}")
      file(CREATE_LINK "/usr/include/${d}" "${MCPRT_HOSTINC}/${d}" SYMBOLIC)
    endif()
  endforeach()
  add_library(mcprt_json INTERFACE)
  target_include_directories(mcprt_json SYSTEM INTERFACE "${MCPRT_HOSTINC}")
else()
  find_package(nlohmann_json 3.10 REQUIRED)
  add_library(mcprt_json INTERFACE)
  target_link_libraries(mcprt_json INTERFACE nlohmann_json::nlohmann_json)
  find_package(Threads REQUIRED)
  find_package(Boost 1.74 REQUIRED COMPONENTS filesystem)
  find_package(spdlog REQUIRED)
  # cpp-httplib: the demo server, the CLI's serve-demo, the tests' loopback servers and the
  # benchmarks; the libraries do not use it. It ships no CMake package on Debian; its .pc
  # carries the -D flags that must match the compiled library (OpenSSL/zlib/brotli support
  # changes class layouts).
  if(MCPRT_BUILD_DEMO OR MCPRT_BUILD_TESTS OR MCPRT_BUILD_BENCH)
    find_package(PkgConfig REQUIRED)
    pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
  endif()
  # CLI11: only the `mcprt` CLI (platform-native/cli), built with MCPRT_BUILD_DEMO.
  if(MCPRT_BUILD_DEMO)
    find_package(CLI11 REQUIRED)
  endif()
  # libcrypto: the native Crypto seam (platform-native/src/native_crypto.cpp) and the
  # native tests that verify its signatures; Debian's libssl-dev.
  find_package(OpenSSL 3.0 REQUIRED COMPONENTS Crypto)
  find_package(tomlplusplus QUIET)
endif()
