# Settings every CUDA executable of the project shares. CMake 3.25 (Debian 12) does not know nvcc's
# C++20 flag and refuses CUDA_STANDARD 20 at generate time; there the property is dropped and the
# flag passed by hand. Host code of .cu files warns like the C++ files (but for the bodies'
# #pragma unroll, which the host pass sees too); device code keeps nvcc's defaults.
function(headroom_cuda_target name)
  target_compile_options(${name} PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-Wno-unknown-pragmas>)
  if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
    set_property(TARGET ${name} PROPERTY CUDA_STANDARD)
    set_property(TARGET ${name} PROPERTY CUDA_STANDARD_REQUIRED OFF)
    target_compile_options(${name} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-std=c++20>)
  endif()
endfunction()
