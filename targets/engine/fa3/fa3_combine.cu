// The split combines the FA3 driver's attention kernels need: FA3's combine template
// (hopper/flash_fwd_combine_launch_template.h) for a bf16 output from fp32 partials, at the two
// head-size-v tiles run_mha_fwd_combine picks for a bf16 call: 64 (v <= 64) and 128 (above).
#include "flash_fwd_combine_launch_template.h"

template void run_mha_fwd_combine_<cutlass::bfloat16_t, float, 64>(Flash_fwd_params& params,
                                                                   cudaStream_t stream, bool enable_pdl);
template void run_mha_fwd_combine_<cutlass::bfloat16_t, float, 128>(Flash_fwd_params& params,
                                                                    cudaStream_t stream, bool enable_pdl);
