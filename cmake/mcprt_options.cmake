# Warnings, sanitizers and the one exception mode every object of a target shares.
add_library(mcprt_warnings INTERFACE)
target_compile_options(mcprt_warnings INTERFACE -Wall -Wextra -Wpedantic -Wno-unused-parameter)
if(MCPRT_WERROR)
  target_compile_options(mcprt_warnings INTERFACE -Werror)
endif()

if(MCPRT_SANITIZE)
  add_compile_options(-fsanitize=${MCPRT_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${MCPRT_SANITIZE})
endif()

if(EMSCRIPTEN)
  # One EH mode for every object (gtest included): a stray throw is then caught, never
  # a silent end of the module. -fwasm-exceptions rules out ASYNCIFY, which we do not use.
  # platform-web/ takes it off again for the shipped module's own objects (size: see there).
  add_compile_options(-fwasm-exceptions)
  add_link_options(-fwasm-exceptions -sALLOW_MEMORY_GROWTH=1)
endif()
