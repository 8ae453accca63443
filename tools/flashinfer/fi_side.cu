// FlashInfer's own host planners (include/flashinfer/attention/scheduler.cuh of the checkout given
// at build time) on a planner_compare::input. Built without the CUDA runtime: runtime_stubs.cpp
// answers the few runtime calls the planners make (device 0, sm_90, the input's SM count; no copies).
#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "flashinfer/attention/scheduler.cuh"
#include "planner_case.hpp"

extern int g_planner_num_sms;  // runtime_stubs.cpp answers the SM-count query with it

namespace planner_compare {
namespace {

struct params_stub {
  using IdType = int32_t;
};

constexpr size_t int_bytes = size_t(1) << 28;
std::vector<unsigned char>& page_locked() {
  static std::vector<unsigned char> buf(int_bytes);
  return buf;
}
// Bytes of the page-locked buffer that may hold something other than the sentinel (all of it at
// first: the buffer starts zeroed).
size_t touched = int_bytes;
// Every int32 slot of the page-locked buffer the plan will use starts as the sentinel, so that a
// slot the planner never writes reads back as one.
void fill_sentinel(size_t bytes) {
  if (bytes + 64 > int_bytes) throw std::runtime_error("int workspace larger than the driver's buffer");
  for (size_t i = 0; i < bytes + 64; i += 4) std::memcpy(&page_locked()[i], &sentinel, 4);
  touched = std::max(touched, bytes + 64);
}
void* fake_device(uintptr_t at) { return reinterpret_cast<void*>(at); }

std::vector<int32_t> read_ints(int64_t offset, int64_t n) {
  std::vector<int32_t> v(n);
  std::memcpy(v.data(), page_locked().data() + offset, n * sizeof(int32_t));
  return v;
}

std::vector<int32_t> page_indptr(const std::vector<int64_t>& kv_lens, int64_t page_size) {
  std::vector<int32_t> p{0};
  for (int64_t k : kv_lens) p.push_back(p.back() + int32_t((k + page_size - 1) / page_size));
  return p;
}
std::vector<int32_t> page_indptr(const input& in) { return page_indptr(in.kv_lens, in.page_size); }

result prefill(const input& in) {
  std::vector<int32_t> qo{0};
  for (int64_t q : in.q_lens) qo.push_back(qo.back() + int32_t(q));
  auto kv = page_indptr(in);
  const uint32_t bs = in.kv_lens.size();
  flashinfer::PrefillPlanInfo info;
  size_t fsz = 0, isz = 0;
  flashinfer::PrefillPlanImpl<false, int32_t>(
      fsz, isz, nullptr, 0, nullptr, nullptr, 0, info, qo.data(), kv.data(), uint32_t(in.total_num_rows), bs,
      in.num_qo_heads, in.num_kv_heads, in.head_dim, in.head_dim, in.page_size, in.cuda_graph, 2,
      in.window_left, in.fixed_split_size, in.disable_split_kv, in.num_colocated_ctas, in.uniform_q_len,
      nullptr, 2);
  fill_sentinel(isz);
  auto st = flashinfer::PrefillPlanImpl<true, int32_t>(
      fsz, isz, fake_device(1 << 20), size_t(1) << 60, fake_device(size_t(1) << 40), page_locked().data(),
      int_bytes, info, qo.data(), kv.data(), uint32_t(in.total_num_rows), bs, in.num_qo_heads,
      in.num_kv_heads, in.head_dim, in.head_dim, in.page_size, in.cuda_graph, 2, in.window_left,
      in.fixed_split_size, in.disable_split_kv, in.num_colocated_ctas, in.uniform_q_len, nullptr, 2);
  if (st != cudaSuccess) throw std::runtime_error("PrefillPlanImpl failed");
  result r;
  r.split_kv = info.split_kv;
  r.cta_tile_q = info.cta_tile_q;
  r.padded_batch_size = info.padded_batch_size;
  r.total_num_rows = info.total_num_rows;
  r.kv_chunk_size = read_ints(info.kv_chunk_size_ptr_offset, 1)[0];
  const int64_t p = info.padded_batch_size;
  r.request_indices = read_ints(info.request_indices_offset, p);
  r.qo_tile_indices = read_ints(info.qo_tile_indices_offset, p);
  r.kv_tile_indices = read_ints(info.kv_tile_indices_offset, p);
  r.o_indptr = read_ints(info.o_indptr_offset, bs + 1);
  for (int32_t x : r.request_indices) r.new_batch_size += x != sentinel;
  if (info.split_kv) {
    r.has_merge_indptr = r.has_block_valid_mask = true;
    r.merge_indptr = read_ints(info.merge_indptr_offset, info.total_num_rows + 1);
    for (int64_t i = 0; i < p; ++i)
      r.block_valid_mask.push_back(page_locked()[info.block_valid_mask_offset + i]);
    r.tmp_v_bytes = info.s_offset - info.v_offset;
    r.tmp_s_bytes = int64_t(fsz) - info.s_offset;
  }
  return r;
}

template <uint32_t HEAD_DIM>
result decode(const input& in) {
  auto kv = page_indptr(in);
  const uint32_t bs = in.kv_lens.size();
  const uint32_t max_grid = in.blocks_per_sm * in.num_sms;
  // BatchDecodeWithPagedKVCacheWorkEstimationDispatched with the occupancy given as an input.
  auto estimate = [&](bool& split_kv, uint32_t& max_grid_size, uint32_t& pages_per_chunk,
                      uint32_t& new_batch_size, uint32_t& gdy, uint32_t batch_size, int32_t* indptr,
                      uint32_t num_qo_heads, uint32_t page_size, bool cuda_graph, cudaStream_t) {
    gdy = in.num_kv_heads;
    max_grid_size = max_grid;
    std::vector<int32_t> pages(batch_size);
    for (uint32_t i = 0; i < batch_size; ++i) pages[i] = indptr[i + 1] - indptr[i];
    if (batch_size * gdy >= max_grid_size) {
      split_kv = false;
      pages_per_chunk = 1;
      for (int32_t x : pages) pages_per_chunk = std::max<uint32_t>(pages_per_chunk, x);
      new_batch_size = batch_size;
    } else {
      std::tie(pages_per_chunk, new_batch_size) =
          flashinfer::PartitionPagedKVCacheBinarySearchMinNumPagePerBatch(max_grid_size, gdy, pages,
                                                                          std::max(128 / page_size, 1U));
      split_kv = !(new_batch_size == batch_size && !cuda_graph);
    }
    (void)num_qo_heads;
    return cudaSuccess;
  };
  flashinfer::DecodePlanInfo info;
  size_t fsz = 0, isz = 0;
  flashinfer::DecodePlanImpl<false, HEAD_DIM, flashinfer::PosEncodingMode::kNone, void, params_stub>(
      fsz, isz, nullptr, 0, nullptr, nullptr, 0, info, kv.data(), bs, in.num_qo_heads, in.page_size,
      in.cuda_graph, nullptr, estimate);
  fill_sentinel(isz);
  auto st = flashinfer::DecodePlanImpl<true, HEAD_DIM, flashinfer::PosEncodingMode::kNone, void, params_stub>(
      fsz, isz, fake_device(1 << 20), size_t(1) << 60, fake_device(size_t(1) << 40), page_locked().data(),
      int_bytes, info, kv.data(), bs, in.num_qo_heads, in.page_size, in.cuda_graph, nullptr, estimate);
  if (st != cudaSuccess) throw std::runtime_error("DecodePlanImpl failed");
  result r;
  r.split_kv = info.split_kv;
  r.padded_batch_size = info.padded_batch_size;
  r.kv_chunk_size = read_ints(info.kv_chunk_size_ptr_offset, 1)[0];
  const int64_t p = info.padded_batch_size;
  r.request_indices = read_ints(info.request_indices_offset, p);
  r.kv_tile_indices = read_ints(info.kv_tile_indices_offset, p);
  r.o_indptr = read_ints(info.o_indptr_offset, p + 1);
  for (int32_t x : r.request_indices) r.new_batch_size += x != sentinel;
  if (info.split_kv) {
    r.has_block_valid_mask = true;
    for (int64_t i = 0; i < p; ++i)
      r.block_valid_mask.push_back(page_locked()[info.block_valid_mask_offset + i]);
    r.tmp_v_bytes = info.s_offset - info.v_offset;
    r.tmp_s_bytes = int64_t(fsz) - info.s_offset;
  }
  return r;
}

sm90_result prefill_sm90(const sm90_input& in) {
  const uint32_t bs = in.kv_lens.size();
  std::vector<int32_t> qo{0}, kv_len;
  for (int64_t q : in.q_lens) qo.push_back(qo.back() + int32_t(q));
  for (int64_t k : in.kv_lens) kv_len.push_back(int32_t(k));
  auto kv = page_indptr(in.kv_lens, in.page_size);
  // The most it can write: every work of every head, or the graph bound, in each of 8 parts.
  int64_t works = 0;
  for (int64_t q : in.q_lens) works += (q + 127) / 128;
  works = std::max(works * in.num_qo_heads, (in.total_num_rows / 128 + 1 + bs) * in.num_qo_heads);
  if (8 * 4 * (works + in.num_sms + 1) + 256 > int64_t(int_bytes) ||
      in.int_workspace_bytes > int64_t(int_bytes))
    throw std::runtime_error("input larger than the driver's page-locked buffer");
  // No counting pass here: the plan writes the page-locked buffer directly, past its parts when they
  // are short. Whatever the last plans may have touched is the sentinel again first.
  for (size_t i = 0; i + 4 <= touched; i += 4) std::memcpy(&page_locked()[i], &sentinel, 4);
  touched = 8 * 4 * (works + in.num_sms + 1) + 256;
  flashinfer::PrefillPlanSM90Info info;
  auto st = flashinfer::PrefillSM90Plan<int32_t>(
      nullptr, 0, fake_device(1 << 20), page_locked().data(), size_t(in.int_workspace_bytes), info, qo.data(),
      kv.data(), kv_len.data(), uint32_t(in.total_num_rows), bs, in.num_qo_heads, in.num_kv_heads,
      in.head_dim_qk, in.head_dim_vo, in.page_size, in.causal, in.cuda_graph, 2, nullptr);
  if (st != cudaSuccess) throw std::runtime_error("PrefillSM90Plan failed");
  sm90_result r;
  r.same_schedule_for_all_heads = info.same_schedule_for_all_heads;
  r.part_offsets = {info.qo_tile_indices_offset, info.qo_indptr_offset,    info.kv_indptr_offset,
                    info.qo_len_offset,          info.kv_len_offset,       info.head_indices_offset,
                    info.work_indptr_offset,     info.batch_indices_offset};
  r.work_indptr = read_ints(info.work_indptr_offset, in.num_sms + 1);
  const int64_t slots = (info.qo_indptr_offset - info.qo_tile_indices_offset) / 4;
  r.qo_tile_indices = read_ints(info.qo_tile_indices_offset, slots);
  r.qo_indptr = read_ints(info.qo_indptr_offset, slots);
  r.kv_indptr = read_ints(info.kv_indptr_offset, slots);
  r.qo_len = read_ints(info.qo_len_offset, slots);
  r.kv_len = read_ints(info.kv_len_offset, slots);
  r.head_indices = read_ints(info.head_indices_offset, slots);
  r.batch_indices = read_ints(info.batch_indices_offset, slots);
  return r;
}

}  // namespace

sm90_result flashinfer_plan_sm90(const sm90_input& in) {
  g_planner_num_sms = int(in.num_sms);
  try {
    return prefill_sm90(in);
  } catch (const flashinfer::Error& e) {
    throw std::runtime_error(e.what());
  }
}

const char* flashinfer_side() {
#ifdef HEADROOM_FI_STUB_SCHEDULER
  return "a stub of scheduler.cuh (tests/tools/fi_stub, no planner logic)";
#else
  return "FlashInfer's scheduler.cuh";
#endif
}

result flashinfer_plan(const input& in) {
  g_planner_num_sms = int(in.num_sms);
  try {
    if (in.prefill) return prefill(in);
    switch (in.head_dim) {
      case 64:
        return decode<64>(in);
      case 128:
        return decode<128>(in);
      case 256:
        return decode<256>(in);
    }
  } catch (const flashinfer::Error& e) {
    throw std::runtime_error(e.what());
  }
  throw std::runtime_error("decode head_dim not 64 / 128 / 256");
}

}  // namespace planner_compare
