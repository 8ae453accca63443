// The bytes FlashInfer's plans take of their workspaces (flashinfer.hpp).
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/backends/fi_prefill_sm90.hpp"
#include "core/backends/flashinfer.hpp"
#include "core/util/checked.hpp"

namespace headroom {
namespace {

struct part {
  int64_t bytes = 0;
  int64_t align = 16;
  bool allocated = true;  // a part the plan does not make moves nothing
};

// AlignedAllocator's bump pointer from a 16-byte-aligned start (FlashInfer checks the buffers'
// alignment): each part at the next multiple of its alignment after the one before.
int64_t aligned(int64_t at, int64_t align) { return ceil_div(at, align) * align; }

// The end of the last part.
int64_t end_of(std::initializer_list<part> parts) {
  int64_t at = 0;
  for (const part& x : parts)
    if (x.allocated) at = checked_add(aligned(at, x.align), x.bytes, "flashinfer workspace");
  return at;
}

int64_t ints(int64_t n) { return checked_mul(n, 4, "flashinfer int workspace"); }

}  // namespace

int64_t fi_int_workspace_bytes(const fi_decode_plan& p) {
  const int64_t n = p.padded;
  return end_of({{ints(n)}, {ints(n)}, {ints(n + 1)}, {4, 1}, {n, 16, p.split}});
}

int64_t fi_int_workspace_bytes(const fi_prefill_plan& p) {
  const int64_t n = p.padded_batch_size;
  return end_of({{ints(n)},
                 {ints(n)},
                 {ints(n)},
                 {ints(p.batch_size + 1)},
                 {4, 1},
                 {4, 16, p.cuda_graph},
                 {ints(p.total_num_rows + 1), 16, p.split_kv},
                 {n, 16, p.split_kv}});
}

std::vector<fi_workspace_part> fi_int_workspace_parts(const fi_prefill_sm90_plan& p) {
  const int64_t works = checked_mul(p.allocated_works, 4, "flashinfer int workspace");
  const int64_t ctas = checked_mul(p.num_ctas + 1, 4, "flashinfer int workspace");
  std::vector<fi_workspace_part> parts = {
      {"batch_prefill_sm90_qo_tile_indices", 0, works}, {"batch_prefill_sm90_qo_offset", 0, works},
      {"batch_prefill_sm90_kv_offset", 0, works},       {"batch_prefill_sm90_qo_len", 0, works},
      {"batch_prefill_sm90_kv_len", 0, works},          {"batch_prefill_sm90_head_indices", 0, works},
      {"batch_prefill_sm90_work_indptr", 0, ctas},      {"batch_prefill_sm90_batch_indices", 0, works}};
  int64_t at = 0;
  for (auto& part : parts) {
    part.offset = aligned(at, 16);  // every part 16-byte aligned
    at = checked_add(part.offset, part.bytes, "flashinfer int workspace");
  }
  return parts;
}

int64_t fi_int_workspace_bytes(const fi_prefill_sm90_plan& p) {
  const auto parts = fi_int_workspace_parts(p);
  return parts.back().offset + parts.back().bytes;
}

std::string fi_int_workspace_overflow(const fi_prefill_sm90_plan& p, int64_t capacity) {
  for (const auto& part : fi_int_workspace_parts(p))
    if (part.offset + part.bytes > capacity) return part.name;
  return "";
}

int64_t fi_float_workspace_bytes(const std::vector<buffer_plan>& parts) {
  const buffer_plan* v = find_buffer(parts, "tmp_v");
  const buffer_plan* s = find_buffer(parts, "tmp_s");
  return end_of(
      {{v ? v->capacity_bytes : 0, 16, v != nullptr}, {s ? s->capacity_bytes : 0, 16, s != nullptr}});
}

}  // namespace headroom
