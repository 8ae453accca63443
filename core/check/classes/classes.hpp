// One function per catalogue class check (class_checks.hpp), each in its own file of this folder.
#pragma once

#include <string>
#include <vector>

#include "core/backends/fa3.hpp"
#include "core/backends/flashinfer.hpp"
#include "core/backends/request_meta.hpp"
#include "core/check/class_checks.hpp"

namespace headroom {

// The mutants of a case that switch FA3's and the per-request metadata's historical capacities on
// (the mirror's plan reports the capacities they give).
fa3_mutants fa3_mutants_of(const check_case& c);
request_meta_mutants request_mutants_of(const check_case& c);

// C2: Triton's 2D/3D threshold from another geometry than the group's own (a performance bug).
void check_c2_path_choice(const class_scope& s, std::vector<class_finding>& out);
// C3: FA3's scheduler metadata against its persistent buffer; metadata rows past max_num_seqs.
void check_c3_fa3_metadata(const class_scope& s, std::vector<class_finding>& out);
// Empty unless vLLM's builder makes no FA3 schedule for this group: the model's layers have more than
// one window config (vllm_fa3_aot_window), or FA3 raises on the schedule call made with
// `builder_heads` query heads (not a whole multiple of its kv heads: mha_fwd_get_scheduler_metadata's
// check); then the report's note saying so. C3 checks no scheduler metadata for such a group.
std::string fa3_schedule_refusal(const group_context& ctx, int64_t builder_heads);
// C4: dummy runs' sequence lengths against the block table's row width.
void check_c4_block_table(const class_scope& s, std::vector<class_finding>& out);
// C5: per-request FlashInfer metadata against the largest padded batch of every padding path.
void check_c5_request_meta(const class_scope& s, std::vector<class_finding>& out);
// C6: token offsets into q and the output past 2^31 under 32-bit offsets.
void check_c6_int32_offsets(const class_scope& s, std::vector<class_finding>& out);
// C7: an all-empty batch after a layer's compression ratio in DeepGEMM's MQA metadata scheduler.
void check_c7_empty_work(const class_scope& s, std::vector<class_finding>& out);
// C8: draft passes' metadata against their q.
void check_c8_draft_passes(const class_scope& s, std::vector<class_finding>& out);
// C9: heads padded to the MLA kernel's tile by the divisors-only helpers.
void check_c9_head_pad(const class_scope& s, std::vector<class_finding>& out);
// C10: the tensor-core decode plan's CUDA-graph grid past its written work entries, unmasked.
void check_c10_graph_grid(const class_scope& s, std::vector<class_finding>& out);
// The padded entries no block_valid_mask covers (0 when the grid is exact or masked).
int64_t fi_unmasked_tail(const fi_prefill_plan& p);
// C11: the Mamba state column computed in the smallest group's block size.
void check_c11_mamba_index(const class_scope& s, std::vector<class_finding>& out);

}  // namespace headroom
