# Installs hopper-async into a scratch prefix, then configures and builds a separate tiny
# project that finds it with find_package(hopper_async), and the same project taking the source
# tree with add_subdirectory; both link hopper::async and hopper::model and run.
file(REMOVE_RECURSE ${WORK_DIR})
foreach(step
    "${CMAKE_COMMAND};-S;${SOURCE_DIR};-B;${WORK_DIR}/lib;-G;${GENERATOR};-DHOPPER_BUILD_TESTS=OFF;-DHOPPER_BUILD_BENCH=OFF;-DHOPPER_BUILD_APPS=OFF;-DCMAKE_INSTALL_PREFIX=${WORK_DIR}/prefix"
    "${CMAKE_COMMAND};--install;${WORK_DIR}/lib"
    "${CMAKE_COMMAND};-S;${SOURCE_DIR}/tests/package/consumer;-B;${WORK_DIR}/consumer;-G;${GENERATOR};-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix"
    "${CMAKE_COMMAND};--build;${WORK_DIR}/consumer"
    "${WORK_DIR}/consumer/consumer"
    "${CMAKE_COMMAND};-S;${SOURCE_DIR}/tests/package/consumer;-B;${WORK_DIR}/subdir;-G;${GENERATOR};-DHOPPER_SOURCE_DIR=${SOURCE_DIR}"
    "${CMAKE_COMMAND};--build;${WORK_DIR}/subdir"
    "${WORK_DIR}/subdir/consumer")
  execute_process(COMMAND ${step} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "step failed (${rc}): ${step}\n${out}\n${err}")
  endif()
endforeach()
message(STATUS "installed package and source tree consumed: ${out}")
