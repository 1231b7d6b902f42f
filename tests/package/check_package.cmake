# Installs hopper-async into a scratch prefix, then configures and builds a separate tiny
# project (consumer/) that finds it with find_package(hopper_async), and the same project taking
# the source tree with add_subdirectory; each consumer is run.
#   MODE=full (default): the library as configured here; consumers link hopper::async and
#     hopper::model (with CUDA they also build a kernel for 80;90a and examples/quickstart.cu);
#     then a model-only consumer of that install with the CUDA toolkit hidden.
#   MODE=model_only: no CUDA anywhere: the library configured without a CUDA compiler, and
#     model-only consumers (package and source tree) with the CUDA toolkit hidden.
# "Hidden": CMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit makes find_package(CUDAToolkit) find nothing,
# as on a machine without CUDA.
if(NOT MODE)
  set(MODE full)
endif()
file(REMOVE_RECURSE ${WORK_DIR})
set(no_cuda -DCMAKE_CUDA_COMPILER= -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON)
set(consumer ${SOURCE_DIR}/tests/package/consumer)
set(report "")

function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "step failed (${rc}): ${cmd}\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

# Configure, build and run the consumer in WORK_DIR/<dir> with the given configure arguments.
function(consume dir)
  step(${CMAKE_COMMAND} -S ${consumer} -B ${WORK_DIR}/${dir} -G ${GENERATOR} ${ARGN})
  set(configured "${out}" PARENT_SCOPE)
  step(${CMAKE_COMMAND} --build ${WORK_DIR}/${dir})
  step(${WORK_DIR}/${dir}/consumer)
  string(STRIP "${out}" out)
  set(line "${out}")
  # With CUDA the kernels' consumer too (it runs them where an sm_90 device exists).
  if(EXISTS ${WORK_DIR}/${dir}/kernels_consumer)
    step(${WORK_DIR}/${dir}/kernels_consumer)
    string(STRIP "${out}" out)
    string(REPLACE "\n" "; " out "${out}")
    set(line "${line}; ${out}")
  endif()
  set(report "${report}\n  ${dir}: ${line}" PARENT_SCOPE)
endfunction()

set(lib_args -G ${GENERATOR} -DHOPPER_BUILD_TESTS=OFF -DHOPPER_BUILD_BENCH=OFF -DHOPPER_BUILD_APPS=OFF
             -DCMAKE_INSTALL_PREFIX=${WORK_DIR}/prefix)
if(MODE STREQUAL "full")
  step(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/lib ${lib_args})
  set(lib_has_cuda ON)
  if(out MATCHES "building the host model only")
    set(lib_has_cuda OFF)
  endif()
  step(${CMAKE_COMMAND} --install ${WORK_DIR}/lib)
  # With CUDA the consumers also build a kernel for 80;90a and the quickstart.
  set(cuda_args "")
  if(lib_has_cuda)
    set(cuda_args -DHOPPER_CONSUMER_CUDA=ON -DHOPPER_QUICKSTART=${SOURCE_DIR}/examples/quickstart.cu)
  endif()
  consume(consumer -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix ${cuda_args})
  consume(subdir -DHOPPER_SOURCE_DIR=${SOURCE_DIR} ${cuda_args})
  consume(model_only -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DHOPPER_CONSUMER_MODEL_ONLY=ON ${no_cuda})
  # Installed with CUDA: without the toolkit the package must say that hopper::async is left out.
  if(lib_has_cuda AND NOT configured MATCHES "hopper::async needs the CUDA toolkit")
    message(FATAL_ERROR "model-only consumer: no note that hopper::async was left out:\n${configured}")
  endif()
elseif(MODE STREQUAL "model_only")
  step(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/lib ${lib_args} ${no_cuda})
  if(NOT out MATCHES "building the host model only")
    message(FATAL_ERROR "the library configured with CUDA hidden did not say host model only:\n${out}")
  endif()
  step(${CMAKE_COMMAND} --install ${WORK_DIR}/lib)
  consume(model_only -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DHOPPER_CONSUMER_MODEL_ONLY=ON ${no_cuda})
  consume(subdir_model_only -DHOPPER_SOURCE_DIR=${SOURCE_DIR} -DHOPPER_CONSUMER_MODEL_ONLY=ON ${no_cuda})
else()
  message(FATAL_ERROR "MODE must be full or model_only, not ${MODE}")
endif()
message(STATUS "package consumed (${MODE}):${report}")
