// The one split combine the FA3 driver's attention kernels need: FA3's combine template
// (hopper/flash_fwd_combine_launch_template.h) for a bf16 output of head size v 128 from fp32
// partials, the instance run_mha_fwd_combine picks for vLLM's bf16 call at head size 128.
#include "flash_fwd_combine_launch_template.h"

template void run_mha_fwd_combine_<cutlass::bfloat16_t, float, 128>(Flash_fwd_params& params,
                                                                    cudaStream_t stream, bool enable_pdl);
