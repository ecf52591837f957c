# Install rules (native, MCPRT_INSTALL; on by default only when mcprt is the top-level
# project): the public headers with the generated mcprt/version.hpp, libmcprt_core.a and
# libmcprt_native.a, the CMake package `mcprt` (find_package(mcprt CONFIG) → mcprt::core,
# mcprt::native) and the pkg-config file mcprt.pc. The CLI and the demo server install
# themselves (platform-native/cli/, demo/). tests/package/ builds against the result.
include(CMakePackageConfigHelpers)

set(MCPRT_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/mcprt"
    CACHE STRING "Where mcprt's CMake package goes (relative to the prefix)")
set(MCPRT_INSTALL_PKGCONFIGDIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig"
    CACHE STRING "Where mcprt.pc goes (relative to the prefix)")
mark_as_advanced(MCPRT_INSTALL_CMAKEDIR MCPRT_INSTALL_PKGCONFIGDIR)

install(DIRECTORY "${PROJECT_SOURCE_DIR}/core/include/" "${PROJECT_SOURCE_DIR}/platform-native/include/"
        "${MCPRT_GENERATED_INCLUDE_DIR}/"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}" FILES_MATCHING PATTERN "*.hpp")

set_target_properties(mcprt_core PROPERTIES EXPORT_NAME core)
set_target_properties(mcprt_native PROPERTIES EXPORT_NAME native)
# (The include directory comes from the targets' own INSTALL_INTERFACE entries.)
install(TARGETS mcprt_core mcprt_native EXPORT mcprt-targets
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}")
install(EXPORT mcprt-targets NAMESPACE mcprt:: FILE mcprtTargets.cmake
        DESTINATION "${MCPRT_INSTALL_CMAKEDIR}")

configure_package_config_file("${CMAKE_CURRENT_LIST_DIR}/mcprtConfig.cmake.in"
                              "${PROJECT_BINARY_DIR}/package/mcprtConfig.cmake"
                              INSTALL_DESTINATION "${MCPRT_INSTALL_CMAKEDIR}")
# Before 1.0 a minor release may change the API: 0.1.x satisfies find_package(mcprt 0.1),
# 0.2 does not.
write_basic_package_version_file("${PROJECT_BINARY_DIR}/package/mcprtConfigVersion.cmake"
                                 COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/package/mcprtConfig.cmake"
              "${PROJECT_BINARY_DIR}/package/mcprtConfigVersion.cmake"
        DESTINATION "${MCPRT_INSTALL_CMAKEDIR}")

# mcprt.pc finds its prefix from its own location (${pcfiledir}), so a tree installed with
# `cmake --install --prefix <dir>` (or moved) is still found right.
file(RELATIVE_PATH MCPRT_PC_PREFIX_FROM_PCFILEDIR
     "/prefix/${MCPRT_INSTALL_PKGCONFIGDIR}" "/prefix")
string(REGEX REPLACE "/$" "" MCPRT_PC_PREFIX_FROM_PCFILEDIR "${MCPRT_PC_PREFIX_FROM_PCFILEDIR}")
configure_file("${CMAKE_CURRENT_LIST_DIR}/mcprt.pc.in" "${PROJECT_BINARY_DIR}/package/mcprt.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/package/mcprt.pc" DESTINATION "${MCPRT_INSTALL_PKGCONFIGDIR}")
