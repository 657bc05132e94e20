# What `cmake --install build --prefix DIR` puts in DIR, for code built
# outside the tree against dlc (examples/fusion-plugin):
#   bin/       dlc-opt, dlc-bench, dlc-run, dlc-kernels
#   include/   dlc's headers, the generated .inc files and the .td files
#   lib/       the dlc libraries (static)
#   lib/cmake/dlc/  dlcConfig.cmake: find_package(dlc) gives dlc::headers,
#              the exported libraries and dlc_add_plugin().
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(DLC_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/dlc)

foreach(dir dialects/include passes/include compiler/include runtime/include)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/dlc
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
    FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
endforeach()
foreach(dir dialects/include passes/include compiler/include runtime/include)
  install(DIRECTORY ${PROJECT_BINARY_DIR}/${dir}/dlc
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
    FILES_MATCHING PATTERN "*.inc"
    PATTERN "CMakeFiles" EXCLUDE)
endforeach()

# The tools find LLVM, CUDA and oneDNN where the build found them.
set(dlc_tools dlc-opt dlc-bench dlc-run dlc-kernels)
set_property(TARGET ${dlc_tools} PROPERTY INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS ${dlc_tools} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# dlc's headers with MLIR's and LLVM's (dlcConfig.cmake adds those, from
# the MLIR it finds) and the language level they need.
add_library(dlc_headers INTERFACE)
target_include_directories(dlc_headers INTERFACE
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_compile_features(dlc_headers INTERFACE cxx_std_17)
set_target_properties(dlc_headers PROPERTIES EXPORT_NAME headers)

# The libraries of the train dialect and its passes, for a tool of one's
# own; they need MLIR only. (A pass plugin links none of them: it resolves
# dlc's symbols against dlc-opt or dlc-bench, see dlc_add_plugin.)
set(dlc_exported_libraries DLCTrainDialect DLCTransforms DLCPipelines)
foreach(lib IN LISTS dlc_exported_libraries)
  target_link_libraries(${lib} INTERFACE $<INSTALL_INTERFACE:dlc::headers>)
endforeach()
install(TARGETS dlc_headers ${dlc_exported_libraries}
  EXPORT dlcTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT dlcTargets NAMESPACE dlc:: DESTINATION ${DLC_INSTALL_CMAKEDIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/dlcConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/dlcConfig.cmake
  INSTALL_DESTINATION ${DLC_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_BINDIR)
install(FILES ${PROJECT_BINARY_DIR}/cmake/dlcConfig.cmake
  DESTINATION ${DLC_INSTALL_CMAKEDIR})
