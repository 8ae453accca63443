// libFuzzer target: the bytes as a plan file (fuzz_inputs.hpp).
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_inputs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  headroom::fuzz::plan_input({reinterpret_cast<const char*>(data), size});
  return 0;
}
