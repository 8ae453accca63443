# The two executables of tools/flashinfer as CMake functions, so that the standalone build
# (tools/flashinfer/CMakeLists.txt, build.sh), the main build (-DHEADROOM_FLASHINFER_DIR) and the
# stub-header test (tests/tools/) make them the same way. headroom's side is the library target
# headroom::core, never a list of its sources (docs/flashinfer-planner.md). Needs the CUDA language
# enabled and find_package(CUDAToolkit) done by the caller.
#
# headroom_fi_planner_compare(TARGET FLASHINFER_INCLUDE)
#   TARGET: planner_compare, FlashInfer's host planners from FLASHINFER_INCLUDE/flashinfer/attention/
#   scheduler.cuh against headroom's mirror. fi_side.cu goes through nvcc (host code only matters);
#   nothing links the CUDA runtime (runtime_stubs.cpp answers its calls), so no GPU or driver is needed.
# headroom_fi_occupancy(TARGET FLASHINFER_INCLUDE)
#   TARGET: occupancy, FlashInfer's decode kernel for sm_90 (run it on the GPU).
set(HEADROOM_FI_TOOL_DIR ${CMAKE_CURRENT_LIST_DIR})

function(headroom_fi_planner_compare target fi_include)
  set(here ${HEADROOM_FI_TOOL_DIR})
  add_library(${target}_fi_side OBJECT ${here}/fi_side.cu)
  target_include_directories(${target}_fi_side PRIVATE ${here}/shim ${fi_include})
  set_target_properties(${target}_fi_side PROPERTIES CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON
                                                     CUDA_RUNTIME_LIBRARY None)
  add_executable(${target} ${here}/planner_compare.cpp ${here}/sm90_compare.cpp ${here}/runtime_stubs.cpp
                           $<TARGET_OBJECTS:${target}_fi_side>)
  target_include_directories(${target} PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  target_link_libraries(${target} PRIVATE headroom::core)
  # g++ links: no cudart (CUDA_RUNTIME_LIBRARY None), the runtime's entry points are runtime_stubs.cpp.
  set_target_properties(${target} PROPERTIES LINKER_LANGUAGE CXX CUDA_RUNTIME_LIBRARY None)
endfunction()

function(headroom_fi_occupancy target fi_include)
  set(here ${HEADROOM_FI_TOOL_DIR})
  add_executable(${target} ${here}/occupancy.cu)
  target_include_directories(${target} PRIVATE ${here}/shim ${fi_include})
  set_target_properties(${target} PROPERTIES CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON
                                             CUDA_ARCHITECTURES 90)
endfunction()
