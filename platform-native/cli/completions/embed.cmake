# cmake -DDIR=<completions dir> -DOUT=<file.cpp> -P embed.cmake
# Writes OUT, which defines the three completion scripts of DIR as C++ strings for
# `mcprt completion bash|zsh|fish` (cli_completion.hpp), so the binary prints exactly the
# files that are installed.
set(delimiter "MCPRT_COMPLETION")
set(body "// Generated from platform-native/cli/completions/ by embed.cmake: do not edit.\n")
string(APPEND body "#include \"cli_completion.hpp\"\n\nnamespace mcprt::cli {\n\n")
foreach(pair "kBashCompletion;mcprt.bash" "kZshCompletion;_mcprt" "kFishCompletion;mcprt.fish")
  list(GET pair 0 symbol)
  list(GET pair 1 file)
  file(READ "${DIR}/${file}" script)
  string(FIND "${script}" ")${delimiter}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${file} contains the raw-string delimiter )${delimiter}\"")
  endif()
  string(APPEND body "const char* const ${symbol} = R\"${delimiter}(${script})${delimiter}\";\n\n")
endforeach()
string(APPEND body "}  // namespace mcprt::cli\n")
file(WRITE "${OUT}" "${body}")
