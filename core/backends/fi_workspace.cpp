// The bytes FlashInfer's plans take of their workspaces (flashinfer.hpp).
#include <cstdint>
#include <initializer_list>

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
// alignment): each part at the next multiple of its alignment; the end of the last.
int64_t end_of(std::initializer_list<part> parts) {
  int64_t at = 0;
  for (const part& x : parts)
    if (x.allocated) at = checked_add(ceil_div(at, x.align) * x.align, x.bytes, "flashinfer workspace");
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

int64_t fi_float_workspace_bytes(const std::vector<buffer_plan>& parts) {
  const buffer_plan* v = find_buffer(parts, "tmp_v");
  const buffer_plan* s = find_buffer(parts, "tmp_s");
  return end_of(
      {{v ? v->capacity_bytes : 0, 16, v != nullptr}, {s ? s->capacity_bytes : 0, 16, s != nullptr}});
}

}  // namespace headroom
