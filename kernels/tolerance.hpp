// Output tolerances per dtype, in one place: |x - ref| <= atol + rtol * |ref| against the fp32
// reference. The kernels round their output (and FlashInfer its partial outputs) to the dtype, so
// the bounds are a few units of the dtype's rounding error (bf16 2^-8, fp16 2^-11 relative) on
// values of magnitude <= 1 (inputs are drawn from +-[1/16, 1)). Calibrated in tests/sim
// (test_kernels prints the largest error seen) and on the GPU lane's 710 in-bounds cases: the
// largest errors are bf16 3.2e-3, fp16 3.8e-4 (the tensor-core pass rounds probabilities to the
// dtype before the second product), fp32 3.3e-7, so each bound leaves a margin of 2.5x or more.
#pragma once

#include "core/model/geometry.hpp"

namespace headroom {

struct tolerance {
  double atol = 0, rtol = 0;
};

constexpr tolerance tolerance_for(dtype d) {
  switch (d) {
    case dtype::bf16:
      return {8.0e-3, 8.0e-3};  // 2 x 2^-8
    case dtype::fp16:
      return {1.0e-3, 1.0e-3};  // 2 x 2^-11
    case dtype::fp32:
      return {1.0e-5, 1.0e-5};  // summation order only
  }
  return {0, 0};
}

// A kernel that multiplies fp32 inputs in TF32 (Triton's tl.dot at its default input precision on
// sm_80 and later, as vLLM's Triton attention does): TF32 keeps fp16's 10 mantissa bits, so its
// fp32 output is held to fp16's bound. The engine target's vLLM kernel showed errors up to 6.5e-4
// on 98 in-bounds fp32 cases (docs/engine-kernels.md), past fp32's bound and within this one.
inline constexpr tolerance tf32_tolerance = tolerance_for(dtype::fp16);

}  // namespace headroom
