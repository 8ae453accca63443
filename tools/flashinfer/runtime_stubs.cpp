// The CUDA runtime calls FlashInfer's host planners make, answered without a device, so that
// planner_compare links with -cudart none: device 0 is an sm_90 part with g_planner_num_sms SMs and
// 227 KiB of opt-in shared memory per block; copies to the device and module registration do nothing.
#include <cuda_runtime_api.h>

int g_planner_num_sms = 132;

extern "C" {
cudaError_t cudaGetDevice(int* d) {
  *d = 0;
  return cudaSuccess;
}
cudaError_t cudaDeviceGetAttribute(int* v, cudaDeviceAttr attr, int) {
  switch (attr) {
    case cudaDevAttrMultiProcessorCount:
      *v = g_planner_num_sms;
      break;
    case cudaDevAttrComputeCapabilityMajor:
      *v = 9;
      break;
    case cudaDevAttrComputeCapabilityMinor:
      *v = 0;
      break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin:
      *v = 232448;
      break;
    default:
      *v = 0;
  }
  return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void*, const void*, size_t, cudaMemcpyKind, cudaStream_t) { return cudaSuccess; }
const char* cudaGetErrorString(cudaError_t) { return "no CUDA runtime in planner_compare"; }
const char* cudaGetErrorName(cudaError_t) { return "cudaErrorStub"; }
cudaError_t cudaGetLastError() { return cudaSuccess; }

// The module registration nvcc emits for the headers' __device__ variables: nothing to register.
void** __cudaRegisterFatBinary(void*) {
  static void* handle = nullptr;
  return &handle;
}
void __cudaRegisterFatBinaryEnd(void**) {}
void __cudaUnregisterFatBinary(void**) {}
void __cudaRegisterVar(void**, char*, char*, const char*, int, size_t, int, int) {}
char __cudaInitModule(void**) { return 0; }
}
