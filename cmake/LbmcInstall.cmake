# cmake --install: the program lbmc, the libraries lbmc_sim (lbmc::sim) and liblbmc
# (lbmc::lbmc), the public headers, a CMake package (find_package(lbmc) gives the
# imported targets and finds their dependencies again: cmake/lbmcConfig.cmake.in), the
# man page lbmc(1) and the bash completion (both generated from the built program: its
# --help texts and `lbmc completion bash`), and the Python package lbmc_analysis for
# lbmc plot (share/lbmc/python). README.md, "Install", says how to use them.
include(CMakePackageConfigHelpers)

set(LBMC_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/lbmc)
install(TARGETS lbmc RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS lbmc_sim liblbmc lbmc_io_deps EXPORT lbmcTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/lbmc DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
install(FILES ${CMAKE_BINARY_DIR}/include/lbmc/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/lbmc)
install(EXPORT lbmcTargets NAMESPACE lbmc:: DESTINATION ${LBMC_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/lbmcConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/lbmcConfig.cmake INSTALL_DESTINATION ${LBMC_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/lbmcConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/lbmcConfig.cmake ${CMAKE_BINARY_DIR}/lbmcConfigVersion.cmake
        DESTINATION ${LBMC_CMAKE_DIR})

# The man page and the bash completion, from the program just built.
add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/lbmc.1
                   COMMAND ${PROJECT_SOURCE_DIR}/scripts/lbmc-man $<TARGET_FILE:lbmc>
                           ${CMAKE_BINARY_DIR}/lbmc.1
                   DEPENDS lbmc ${PROJECT_SOURCE_DIR}/scripts/lbmc-man
                   COMMENT "Man page lbmc.1 from lbmc --help")
add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/lbmc.bash
                   COMMAND sh -c "\"$0\" completion bash > \"$1\"" $<TARGET_FILE:lbmc>
                           ${CMAKE_BINARY_DIR}/lbmc.bash
                   DEPENDS lbmc COMMENT "Bash completion from lbmc completion bash" VERBATIM)
add_custom_target(lbmc_docs ALL DEPENDS ${CMAKE_BINARY_DIR}/lbmc.1 ${CMAKE_BINARY_DIR}/lbmc.bash)
install(FILES ${CMAKE_BINARY_DIR}/lbmc.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${CMAKE_BINARY_DIR}/lbmc.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME lbmc)

# The Python package, where lbmc plot looks for it.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/analysis/lbmc_analysis
        DESTINATION ${CMAKE_INSTALL_DATADIR}/lbmc/python PATTERN "__pycache__" EXCLUDE)

# The licence (GPL-3.0-or-later) beside the documentation.
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})
