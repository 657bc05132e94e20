# dlc_add_op_list(TBLGEN MLIR_INCLUDE_DIR): the runtime's op list, an
# X-macro list of every train op with an op class from which the runtime's
# OpId enum is built (runtime/include/dlc/runtime/Ops.h). llvm-tblgen dumps
# the records of TrainOps.td as JSON and GenOpList.py picks the ops, so an
# op added to or renamed in ODS changes the enum at the next build.
#
# The list lands in ${PROJECT_BINARY_DIR}/runtime/include/dlc/runtime/
# (apart from MLIR's generated headers; the install copies it), and the
# INTERFACE target dlc_op_list gives that folder and the build order. It
# needs no MLIR CMake package: the runtime's fuzz build (test/fuzz/), which
# has none, calls it too.
set(DLC_OP_LIST_SOURCE_DIR ${CMAKE_CURRENT_LIST_DIR})
function(dlc_add_op_list tblgen mlir_include_dir)
  find_package(Python3 REQUIRED COMPONENTS Interpreter)
  set(include_dir ${PROJECT_BINARY_DIR}/runtime/include)
  set(list ${include_dir}/dlc/runtime/OpList.inc)
  set(records ${CMAKE_CURRENT_BINARY_DIR}/TrainOpRecords.json)
  file(GLOB td CONFIGURE_DEPENDS ${DLC_OP_LIST_SOURCE_DIR}/*.td)
  # dialects/include, four folders above this one.
  get_filename_component(dialects_include ${DLC_OP_LIST_SOURCE_DIR}/../../../.. ABSOLUTE)
  add_custom_command(OUTPUT ${list}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${include_dir}/dlc/runtime
    COMMAND ${tblgen} --dump-json -I ${mlir_include_dir} -I ${dialects_include}
      ${DLC_OP_LIST_SOURCE_DIR}/TrainOps.td -o ${records}
    COMMAND ${Python3_EXECUTABLE} ${DLC_OP_LIST_SOURCE_DIR}/GenOpList.py ${records} ${list}
    DEPENDS ${td} ${DLC_OP_LIST_SOURCE_DIR}/GenOpList.py
    COMMENT "Generating the runtime's op list from the train dialect's ODS" VERBATIM)
  add_custom_target(DLCOpListGen DEPENDS ${list})
  add_library(dlc_op_list INTERFACE)
  target_include_directories(dlc_op_list INTERFACE $<BUILD_INTERFACE:${include_dir}>)
  add_dependencies(dlc_op_list DLCOpListGen)
endfunction()
