// fa3_attention.hpp: which of FA3's attention kernels this driver has, and mha_fwd's launch of
// them. Compiled with FA3's flags beside its instantiations (CMakeLists.txt): the bf16 forward
// kernel at FA3's head sizes 64, 96, 128, 192 and 256 and at 192 / v 128, the paged cache read
// without TMA and through it, split and unsplit (instantiations/flash_fwd_hdim{D}_bf16_{paged,
// paged_split,packgqa,split}_sm90.cu, and hdim192_128's, with its unpacked unit), and the bf16
// combines of head size v 64 and 128 (fa3_combine.cu): the ones run_mha_fwd and
// run_mha_fwd_combine pick for such a call in vLLM's build.
#include <cuda_runtime_api.h>

#include "cutlass/numeric_types.h"
#include "targets/engine/fa3/fa3_attention.hpp"

namespace headroom::engine::fa3 {
namespace {

std::string error_text() {
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? "" : std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

// One of run_mha_fwd's launches: head size D / v DV, split or not, the paged cache read without TMA
// or through it, GQA packed as vLLM's build packs it (FLASHATTENTION_PACKGQA_ONLY: always for
// DV = D; for 192 / 128 when split, paged without TMA, or as the params say).
template <int D, int DV, bool Split, bool PagedNonTma>
void launch(Flash_fwd_params& p) {
  if constexpr (D != DV && !Split && !PagedNonTma) {  // the one unpacked unit built (192 / 128)
    if (!p.pack_gqa)
      return run_mha_fwd_<90, cutlass::bfloat16_t, D, DV, Split, PagedNonTma, false, false>(p, nullptr);
  }
  run_mha_fwd_<90, cutlass::bfloat16_t, D, DV, Split, PagedNonTma, false, true>(p, nullptr);
}

// The forward kernel of head size D / v DV (no softcap; the page table is always set).
template <int D, int DV>
void run_forward(Flash_fwd_params& p) {
  const bool tma = p.pagedkv_tma;
  if (p.num_splits > 1)
    tma ? launch<D, DV, true, false>(p) : launch<D, DV, true, true>(p);
  else
    tma ? launch<D, DV, false, false>(p) : launch<D, DV, false, true>(p);
}

}  // namespace

std::string unbuilt(const attention& a) {
  const Flash_fwd_params& p = a.s.params;
  if (p.arch != 90) return "FA3's SM90 kernels need an sm_90 device (arch " + std::to_string(p.arch) + ")";
  if (p.is_e4m3 || !p.is_bf16) return "only FA3's bf16 kernels are built";
  // run_mha_fwd takes a head size v apart from the head size for 128 < d <= 192 with v <= 128 (the
  // 192 / 128 kernel, built here) and for d <= 64 (64 / 256 and 64 / 512, not built).
  const bool diff192 = p.d > 128 && p.d <= 192 && p.dv <= 128;
  if (p.d > 256 || (p.dv != p.d && !diff192))
    return "FA3 has no kernel for head size " + std::to_string(p.d) + " / v " + std::to_string(p.dv) +
           " built here (head size v = head size at most 256, or 192 / 128)";
  return {};
}

std::string run_attention(attention& a) {
  Flash_fwd_params& p = a.s.params;
  // run_mha_fwd's dispatch: the smallest of FA3's head sizes that holds d, and 192 / 128 for a
  // head size v apart.
  if (p.d <= 64)
    run_forward<64, 64>(p);
  else if (p.d <= 96)
    run_forward<96, 96>(p);
  else if (p.d <= 128)
    run_forward<128, 128>(p);
  else if (p.d <= 192 && p.dv != p.d)
    run_forward<192, 128>(p);
  else if (p.d <= 192)
    run_forward<192, 192>(p);
  else
    run_forward<256, 256>(p);
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
