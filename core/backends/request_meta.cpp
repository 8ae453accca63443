// Per-request metadata sizing (request_meta.hpp): vLLM's FlashInferMetadataBuilder buffers, SGLang's
// FlashInferAttnBackend (kv_indptr / kv_last_page_len from _cuda_graph_capture_max_bs; the eager
// ceiling of get_eager_max_batch_size) and vllm-ascend's per-request buffers.
#include "core/backends/request_meta.hpp"

#include <algorithm>

#include "core/util/checked.hpp"

namespace headroom {
namespace {

int64_t round_up(int64_t x, int64_t m) { return ceil_div(x, m) * m; }

// A graph batch of `graph_size` tokens, in requests (SGLang captures batch sizes of requests).
int64_t graph_requests(const engine_settings& s, int64_t graph_size) {
  return ceil_div(graph_size, 1 + s.num_speculative_tokens);
}

// get_eager_max_batch_size (utils/common.py at 34af3ff) for a batch of `reqs` requests: under
// require_mlp_sync (DP attention, which attn_tp_size > 1 stands for, or a gathered buffer) rounded
// up to the attention TP size, then to get_cp_padding_align_size (layers/cp/padding.py): the
// attention CP size, twice it under prefill CP in sequence-split mode (is_prefill_cp_in_seq_split
// or is_dsa_prefill_cp_in_seq_split: --cp-strategy zigzag, whose legacy mode is in-seq-split);
// else `reqs` itself. prepare_mlp_sync_batch pads an eager batch's tokens with the same size.
int64_t sglang_eager_batch(const engine_settings& s, int64_t reqs) {
  if (s.attn_tp_size == 1 && !s.gathered_buffer) return reqs;
  return round_up(round_up(reqs, s.attn_tp_size), s.attn_cp_size * (s.cp_zigzag ? 2 : 1));
}

}  // namespace

// _cuda_graph_capture_max_bs(server_args, req_to_token_pool.size): no graph batch exceeds it, as
// capture_sizes_of drops the sizes above it.
int64_t sglang_graph_ceiling(const engine_settings& s) { return sglang_max_graph_requests(s); }

int64_t sglang_eager_ceiling(const engine_settings& s) { return sglang_eager_batch(s, request_pool_of(s)); }

int64_t request_meta_rows(const engine_settings& s, const request_meta_mutants& m) {
  switch (s.flavour) {
    case engine_flavour::vllm:
      return s.max_num_seqs;
    case engine_flavour::sglang:
      if (m.from_pool) return request_pool_of(s);
      if (m.graph_ceiling) return sglang_graph_ceiling(s);
      return std::max(sglang_graph_ceiling(s), sglang_eager_ceiling(s));
    case engine_flavour::vllm_ascend:
      if (m.max_num_seqs || !has_full_graphs(s.cg_mode)) return s.max_num_seqs;
      return std::max(s.max_num_seqs, max_capture_of(s)) + 1;
  }
  return s.max_num_seqs;
}

std::vector<int64_t> request_meta_batches(const engine_settings& s, const engine_step& st) {
  const bool dummy = st.spec.kind == step_kind::dummy;
  std::vector<int64_t> out;
  if (st.graph_size == 0 || dummy) {  // eager: the step itself, or a dummy's warm-up
    const int64_t reqs = st.num_reqs_padded;
    out.push_back(s.flavour == engine_flavour::sglang ? sglang_eager_batch(s, reqs) : reqs);
  }
  if (st.graph_size > 0) {
    switch (s.flavour) {
      case engine_flavour::vllm:
        out.push_back(st.num_reqs_padded);
        break;
      case engine_flavour::sglang:
        out.push_back(round_up(std::max(graph_requests(s, st.graph_size), st.num_reqs_padded),
                               sglang_graph_multiple(s)));
        break;
      case engine_flavour::vllm_ascend:
        out.push_back(std::max(st.graph_size, st.num_reqs_padded) + 1);
        break;
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

request_meta_plan plan_request_meta(const engine_settings& s, const engine_step& st, int64_t padded,
                                    int64_t page_size, const request_meta_mutants& m) {
  request_meta_plan p;
  p.padded = padded;
  p.indptr.push_back(0);
  for (int64_t i = 0; i < padded; ++i) {
    const int64_t len = i < st.b.num_seqs() ? st.b.seq_lens[static_cast<std::size_t>(i)] : 0;
    p.indptr.push_back(static_cast<int32_t>(p.indptr.back() + ceil_div(len, page_size)));
    p.last_page_len.push_back(static_cast<int32_t>(len % page_size == 0 ? page_size : len % page_size));
  }
  const int64_t rows = request_meta_rows(s, m);
  p.buffers = {{"paged_kv_indptr", checked_mul(rows + 1, 4), 4},
               {"paged_kv_last_page_len", checked_mul(rows, 4), 4}};
  return p;
}

std::vector<buffer_need> request_meta_needs(const request_meta_plan& p) {
  return {{"paged_kv_indptr", 4, p.padded + 1}, {"paged_kv_last_page_len", 4, p.padded}};
}

}  // namespace headroom
