# Fails when a file under core/ includes a platform header (threads, POSIX, Emscripten,
# cpp-httplib, Boost, spdlog, Windows). core/ may use the standard library and
# nlohmann_json only.
file(GLOB_RECURSE files "${CORE_DIR}/*.hpp" "${CORE_DIR}/*.cpp" "${CORE_DIR}/*.h")
set(bad "")
foreach(f IN LISTS files)
  file(STRINGS "${f}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"](thread|mutex|condition_variable|future|unistd\\.h|sys/|emscripten|httplib\\.h|boost/|spdlog/|fmt/|windows\\.h|pthread\\.h|asio)")
  if(lines)
    list(APPEND bad "${f}: ${lines}")
  endif()
endforeach()
list(LENGTH files n)
if(bad)
  string(REPLACE ";" "\n  " msg "${bad}")
  message(FATAL_ERROR "core/ includes platform headers:\n  ${msg}")
endif()
message(STATUS "checked ${n} core files: no platform includes")
