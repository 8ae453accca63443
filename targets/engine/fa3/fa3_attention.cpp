// fa3_attention.hpp: mha_fwd's params for vLLM's attention call.
#include "targets/engine/fa3/fa3_attention.hpp"

#include <cmath>

#include "targets/engine/fa3/fa3_rules.hpp"

namespace headroom::engine::fa3 {

attention attention_of(const attention_call& c, int arch, int num_sm, const attention_tensors& t) {
  attention a;
  // The rules mha_fwd shares with mha_fwd_get_scheduler_metadata: the mask, paged-KV TMA, the split
  // count, GQA packing and the metadata layout.
  a.s = schedule_of(c.run, arch, num_sm, t.cu_seqlens_q, t.seqused_k);
  Flash_fwd_params& p = a.s.params;
  // mha_fwd only: more requests than one CTA prepares run unsplit (after the layout is fixed).
  if (p.b > fa3_rules::varlen_max_batches_1cta) p.num_splits = 1;
  point_into(a.s, t.metadata);
  p.tile_count_semaphore_offset = a.s.nvec * a.s.rounded;
  p.skip_scheduler_metadata_computation = true;

  const int h = c.run.num_heads, hk = c.run.num_heads_k, d = c.run.headdim, dv = p.dv;
  const auto round128 = [](int x) { return (x + 127) / 128 * 128; };
  p.q_ptr = t.q, p.k_ptr = t.k, p.v_ptr = t.v, p.o_ptr = t.out;
  // Strides in elements: q [total_q][h][d] and out [total_q][h][dv]; the caches [pages][page_size]
  // [hk][d] (K) and [..][dv] (V) views whose kv-head rows lie kv_row_stride apart (d, 2d in vLLM's
  // packed cache, d + dv in its DiffKV cache).
  const int64_t kv_row = c.kv_row_stride;
  p.q_row_stride = int64_t{h} * d, p.q_head_stride = d;
  p.o_row_stride = int64_t{h} * dv, p.o_head_stride = dv;
  p.k_row_stride = p.v_row_stride = hk * kv_row;
  p.k_head_stride = p.v_head_stride = kv_row;
  p.v_dim_stride = 1;
  p.k_batch_stride = p.v_batch_stride = c.run.page_size * hk * kv_row;  // no cu_seqlens_k
  p.cu_seqlens_q = t.cu_seqlens_q, p.seqused_k = t.seqused_k;
  p.cu_seqlens_k = nullptr, p.seqused_q = nullptr;
  p.softmax_lse_ptr = t.softmax_lse;
  p.seqlen_q_rounded = round128(p.seqlen_q), p.seqlen_k_rounded = round128(p.seqlen_k);
  p.scale_softmax = c.softmax_scale;
  p.softcap = 0.f;
  p.p_dropout = 1.f;  // the keep probability of dropout 0
  p.p_dropout_in_uint8_t = static_cast<uint8_t>(std::floor(p.p_dropout * 255.0));
  p.rp_dropout = 1.f;
  p.total_q = c.total_q;
  p.total_k = p.b * c.run.page_size;  // batch x k.size(1), as mha_fwd counts a paged cache
  p.b_k = p.b;
  p.page_table = t.page_table;
  p.page_table_batch_stride = c.pages_per_seq;
  p.num_pages = c.num_pages;
  p.rotary_dim = 0;
  p.cp_world_size = 1, p.cp_rank = 0, p.cp_tot_seqused_k = nullptr;
  p.s_aux_ptr = nullptr;
  a.splits = p.num_splits > 1;
  if (a.splits) {
    // out_accum [splits][h][total_q][dv], softmax_lse_accum [splits][h][total_q], fp32.
    p.is_fp32 = false;
    p.oaccum_ptr = t.out_accum, p.softmax_lseaccum_ptr = t.softmax_lse_accum;
    p.oaccum_head_stride = int64_t{c.total_q} * dv;
    p.oaccum_split_stride = h * p.oaccum_head_stride;
    p.oaccum_row_stride = dv;
    p.lseaccum_head_stride = c.total_q;
    p.lseaccum_split_stride = int64_t{h} * c.total_q;
  }
  return a;
}

}  // namespace headroom::engine::fa3
