// fa3_attention.hpp: which of FA3's attention kernels this driver has, and mha_fwd's launch of
// them. Compiled with FA3's flags beside its instantiations (CMakeLists.txt): the forward kernel
// at FA3's head sizes 64, 96, 128, 192 and 256, bf16, paged KV without TMA and packed GQA, split
// and unsplit (instantiations/flash_fwd_hdim{64,96,128,192,256}_bf16_paged{_split,}_sm90.cu), and
// the bf16 combines of head size v 64 and 128 (fa3_combine.cu), the ones run_mha_fwd and
// run_mha_fwd_combine pick for such a call (head size v = head size).
#include <cuda_runtime_api.h>

#include "cutlass/numeric_types.h"
#include "targets/engine/fa3/fa3_attention.hpp"

namespace headroom::engine::fa3 {
namespace {

std::string error_text() {
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? "" : std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

}  // namespace

std::string unbuilt(const attention& a) {
  const Flash_fwd_params& p = a.s.params;
  if (p.arch != 90) return "FA3's SM90 kernels need an sm_90 device (arch " + std::to_string(p.arch) + ")";
  if (p.is_e4m3 || !p.is_bf16) return "only FA3's bf16 kernels are built";
  if (p.d > 256 || p.dv != p.d)
    return "FA3 has no kernel for head size " + std::to_string(p.d) + " / v " + std::to_string(p.dv) +
           " built here (head size v = head size, at most 256)";
  if (p.pagedkv_tma) return "FA3 would read the cache by TMA (pages of whole key blocks): not built";
  if (!p.pack_gqa) return "FA3 would not pack GQA: not built";
  return {};
}

// The forward kernel of head size D, split or not (paged KV without TMA, no softcap, packed GQA).
template <int D>
void run_forward(Flash_fwd_params& p) {
  if (p.num_splits > 1)
    run_mha_fwd_<90, cutlass::bfloat16_t, D, D, true, true, false, true>(p, nullptr);
  else
    run_mha_fwd_<90, cutlass::bfloat16_t, D, D, false, true, false, true>(p, nullptr);
}

std::string run_attention(attention& a) {
  Flash_fwd_params& p = a.s.params;
  // run_mha_fwd's dispatch: the smallest of FA3's head sizes that holds d.
  if (p.d <= 64)
    run_forward<64>(p);
  else if (p.d <= 96)
    run_forward<96>(p);
  else if (p.d <= 128)
    run_forward<128>(p);
  else if (p.d <= 192)
    run_forward<192>(p);
  else
    run_forward<256>(p);
  if (std::string e = error_text(); !e.empty()) return e;
  if (p.num_splits > 1) {
    p.is_bf16 = true;  // the combine writes the bf16 output
    if (p.dv <= 64)
      run_mha_fwd_combine_<cutlass::bfloat16_t, float, 64>(p, nullptr, true);
    else
      run_mha_fwd_combine_<cutlass::bfloat16_t, float, 128>(p, nullptr, true);
  } else if (p.tile_count_semaphore && p.skip_scheduler_metadata_computation) {
    cudaMemsetAsync(p.tile_count_semaphore, 0, sizeof(int), nullptr);
  }
  return error_text();
}

}  // namespace headroom::engine::fa3
