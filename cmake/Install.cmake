include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS fgemm EXPORT fgemmTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY include/fgemm DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT fgemmTargets NAMESPACE fgemm:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/fgemm)
configure_package_config_file(cmake/fgemmConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/fgemmConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/fgemm)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/fgemmConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/fgemmConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/fgemmConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/fgemm)
