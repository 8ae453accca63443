// Input upload and launch-shape helpers shared by the Triton and FlashInfer glue (sim_runs.hpp).
#include "kernels/sim_runs.hpp"

#include <cmath>

#include "kernels/numeric.hpp"

namespace headroom {

int head_config(int64_t head_size) {
  if (head_size <= 64) return 64;
  if (head_size <= 128) return 128;
  if (head_size <= 256) return 256;
  return 512;
}

int64_t rows_per_pass(int64_t rows, int64_t head_size) {
  const int64_t lanes = head_config(head_size) / 8 > 32 ? 32 : head_config(head_size) / 8;
  const int64_t cap = attention_block_threads / lanes;
  return rows < 1 ? 1 : (rows < cap ? rows : cap);
}

template <class T>
sim_inputs<T> upload_inputs(sim::memory& m, const attention_inputs<T>& h) {
  sim_inputs<T> s;
  auto& in = s.in;
  in.q = m.upload("q", h.q);
  in.k_cache = m.upload("k_cache", h.k_cache);
  in.v_cache = m.upload("v_cache", h.v_cache);
  in.block_table = m.upload("block_table", h.block_table);
  in.seq_lens = m.upload("seq_lens", h.seq_lens);
  in.query_start = m.upload("query_start", h.query_start);
  in.num_seqs = h.num_seqs();
  in.num_tokens = h.num_tokens();
  in.num_heads = h.num_heads;
  in.num_kv_heads = h.num_kv_heads;
  in.head_size = h.head_size;
  in.block_size = h.block_size;
  in.max_blocks_per_seq = h.max_blocks_per_seq;
  in.sliding_window = h.sliding_window;
  in.max_query_len = h.max_query_len;
  in.scale = 1.0f / std::sqrt(static_cast<float>(h.head_size));
  s.output = m.alloc<T>(output_buffer_name, in.num_tokens * in.num_heads * in.head_size,
                        sim::fill::scratch);
  return s;
}

template sim_inputs<float> upload_inputs<float>(sim::memory&, const attention_inputs<float>&);
template sim_inputs<bf16> upload_inputs<bf16>(sim::memory&, const attention_inputs<bf16>&);
template sim_inputs<fp16> upload_inputs<fp16>(sim::memory&, const attention_inputs<fp16>&);

}  // namespace headroom
