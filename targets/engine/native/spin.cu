// native_driver.hpp: spin_device (declared there; this unit stays free of its C++20 includes).
#include <cuda_runtime_api.h>

namespace headroom::engine::native {
namespace {

__global__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

}  // namespace

void spin_device(long long cycles) { spin<<<1, 1>>>(cycles); }

}  // namespace headroom::engine::native
