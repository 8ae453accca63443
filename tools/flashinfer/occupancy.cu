// occupancy: the blocks per SM of FlashInfer's CUDA-core batch-decode kernel, instantiated as
// BatchDecodeWithPagedKVCacheWorkEstimationDispatched does (bf16 q / kv / o, int32 indices, no
// positional encoding, the default variant; NUM_STAGES_SMEM 2 for sm_80+, the same shared-memory
// formula), for GQA groups 1, 2, 3, 4, 6, 8 and head sizes 64, 128, 256. Prints JSON for
// device_params::blocks_by_head (core/backends/fi_device.cpp): "as_planned" is the query exactly as
// the planner makes it (the kernel's dynamic shared-memory limit untouched: a fresh process), and
// "after_run_attribute" the query once the run has raised that limit to the block's shared memory.
// Build: tools/flashinfer/build.sh FLASHINFER_DIR OUTDIR; run OUTDIR/occupancy on the device.
#include <cstdio>

#include "flashinfer/attention/decode.cuh"
#include "flashinfer/attention/default_decode_params.cuh"
#include "flashinfer/attention/variants.cuh"

namespace {

using dtype = nv_bfloat16;
using params = flashinfer::BatchDecodeParams<dtype, dtype, dtype, int32_t>;
using variant = flashinfer::DefaultAttention<false, false, false, false>;
bool first = true;

template <uint32_t G, uint32_t D>
void measure() {
  constexpr uint32_t num_stages_smem = 2;  // DISPATCH_COMPUTE_CAP_DECODE_NUM_STAGES_SMEM, sm_80+
  constexpr uint32_t vec_size = std::max(16UL / sizeof(dtype), D / 32UL);
  constexpr uint32_t bdx = D / vec_size, bdy = G;
  constexpr uint32_t num_threads = std::max(128U, bdx * bdy), bdz = num_threads / (bdx * bdy);
  constexpr uint32_t tile = G == 1 ? 4U : 1U;  // tile_size_per_bdx for a 2-byte kv
  const uint32_t smem = 2 * num_stages_smem * tile * bdy * bdz * D * sizeof(dtype) +
                        std::max(tile * num_threads * sizeof(dtype*), 2 * bdy * bdz * sizeof(float));
  auto kernel =
      flashinfer::BatchDecodeWithPagedKVCacheKernel<flashinfer::PosEncodingMode::kNone, num_stages_smem, tile,
                                                    vec_size, bdx, bdy, bdz, variant, params>;
  int planned = -1, after = -1;
  cudaError_t e1 = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&planned, kernel, num_threads, smem);
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  cudaError_t e2 = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&after, kernel, num_threads, smem);
  cudaFuncAttributes attr{};
  cudaFuncGetAttributes(&attr, kernel);
  std::printf(
      "%s    {\"group\": %u, \"head_size\": %u, \"threads\": %u, \"smem_bytes\": %u, \"registers\": %d, "
      "\"as_planned\": %d, \"after_run_attribute\": %d, \"errors\": \"%s/%s\"}",
      first ? "" : ",\n", G, D, num_threads, smem, attr.numRegs, planned, after, cudaGetErrorName(e1),
      cudaGetErrorName(e2));
  first = false;
}

template <uint32_t G>
void per_head() {
  measure<G, 64>();
  measure<G, 128>();
  measure<G, 256>();
}

}  // namespace

int main() {
  int dev = 0, sms = 0, major = 0, minor = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, dev);
#ifdef HEADROOM_FAST_MOD_DIV_SHIM
  const bool shim = true;
#else
  const bool shim = false;
#endif
  std::printf(
      "{\"device\": \"%s\", \"num_sms\": %d, \"compute_capability\": \"%d.%d\", \"fast_mod_div_shim\": %s,\n"
      "  \"occupancy\": [\n",
      prop.name, sms, major, minor, shim ? "true" : "false");
  per_head<1>();
  per_head<2>();
  per_head<3>();
  per_head<4>();
  per_head<6>();
  per_head<8>();
  std::printf("\n  ]\n}\n");
  return 0;
}
