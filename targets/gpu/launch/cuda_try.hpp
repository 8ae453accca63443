// HEADROOM_CUDA_TRY: every CUDA runtime call of the GPU lane goes through it (nvbench, cuCollections
// style). On failure it clears the (non-sticky) error, then throws cuda_error with file:line, the
// call's text, the error's name and description. sticky() tells the caller the context is lost
// (illegal address and friends): the worker must report and exit, not go on.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace headroom::gpu {

class cuda_error : public std::runtime_error {
 public:
  cuda_error(cudaError_t code, bool sticky, const std::string& what)
      : std::runtime_error(what), code_(code), sticky_(sticky) {}
  cudaError_t code() const { return code_; }
  bool sticky() const { return sticky_; }

 private:
  cudaError_t code_;
  bool sticky_;
};

// Errors after which the context is unusable (CUDA's "sticky" errors): every later call fails.
inline bool is_sticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
      return true;
    default:
      return false;
  }
}

// The source file from the project's targets/ folder on: __FILE__ holds the build machine's path,
// which a message shown to users should not.
inline std::string_view project_file(std::string_view file) {
  const auto at = file.rfind("/targets/");
  return at == std::string_view::npos ? file : file.substr(at + 1);
}

[[noreturn]] inline void cuda_fail(cudaError_t e, const char* call, const char* file, int line) {
  (void)cudaGetLastError();  // clear it, so a non-sticky error does not poison the next call
  const bool sticky = is_sticky(e) || cudaPeekAtLastError() != cudaSuccess;
  throw cuda_error(e, sticky,
                   std::string(project_file(file)) + ":" + std::to_string(line) + ": " + call + ": " +
                       cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
}

}  // namespace headroom::gpu

#define HEADROOM_CUDA_TRY(call)                                                     \
  do {                                                                              \
    const cudaError_t headroom_cuda_status_ = (call);                               \
    if (headroom_cuda_status_ != cudaSuccess)                                       \
      ::headroom::gpu::cuda_fail(headroom_cuda_status_, #call, __FILE__, __LINE__); \
  } while (0)
