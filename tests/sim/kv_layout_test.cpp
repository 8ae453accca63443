// The two KV-cache layouts (docs/engines.md §10) in the kernel bodies: every attention body (Triton
// 3D + reduce, Triton 2D, FlashInfer decode with and without the merge; the tensor-core pass in
// bf16, the CUDA-core pass in fp32) writes the same bits from the separate and the packed cache and
// matches the fp32 reference; the packed cache is one simulator buffer, so an access one row past
// it is out of bounds with the packed extent, and a read that lands in the other half is no bounds
// error but a wrong output. Cases and executors: kv_layout_case_test.cpp.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/backends/flashinfer.hpp"
#include "core/backends/triton.hpp"
#include "kernels/reference.hpp"
#include "targets/sim/sim_executor.hpp"
#include "targets/sim/sim_launch.hpp"

namespace headroom {
namespace {

enum class body { triton_3d, triton_2d, fi_decode };

struct layout_run {
  std::vector<float> out;
  output_comparison cmp;
  sim::sim_log log;
  int64_t kv_buffers = 0;  // simulator buffers named k_cache, v_cache or kv_cache
  bool split = false;      // flashinfer: the plan splits KV (decode, then the merge)
};

// Runs `which` on inputs of `layout` from `seed`; `edit` may change the host inputs and the
// attention params before the launch (the planted bugs below).
template <class T, class Edit>
layout_run run_layout(const rank_layer& l, const batch& b, int64_t bs, kv_layout layout, body which, dtype d,
                      Edit&& edit) {
  auto host = make_attention_inputs<T>(l, b, bs, 7, layout);
  sim::memory m;
  auto in = upload_inputs(m, host);
  edit(host, m, in);
  layout_run r;
  if (which == body::fi_decode) {
    flashinfer_options fo;
    fo.page_size = bs;
    const auto p =
        make_fi_decode_params(m, in, plan_fi_decode(l.num_heads, l.num_kv_heads, l.head_size, d, b, fo));
    r.split = p.split;
    run_checked<T>(m, p);
  } else {
    triton_options o;
    o.snap_to_capture = false;
    const triton_plan tp = plan_triton(l.num_heads, l.num_kv_heads, l.head_size, o);
    run_checked<T>(m, make_triton_params(m, in, tp, l, b, which == body::triton_3d));
  }
  for (const T x : m.download(in.output)) r.out.push_back(to_float(x));
  r.cmp = compare_output(r.out, attention_reference(host), d, l.num_heads, l.head_size);
  r.log = m.log;
  for (std::size_t i = 0; i < m.size(); ++i)
    r.kv_buffers += m[i].name == "k_cache" || m[i].name == "v_cache" || m[i].name == "kv_cache";
  return r;
}

const auto no_edit = [](auto&, sim::memory&, auto&) {};

rank_layer gqa_layer(int64_t head_size, int64_t window = 0) {
  return {"model.layers.0.self_attn.attn",
          window ? attn_kind::sliding : attn_kind::full,
          8,
          2,
          head_size,
          head_size,
          window};
}

std::string name_of(body w) {
  return w == body::triton_3d ? "triton 3D" : w == body::triton_2d ? "triton 2D" : "flashinfer decode";
}

template <class T>
void expect_layouts_agree(dtype d) {
  struct shape {
    body which;
    rank_layer l;
    batch b;
    int64_t bs;
  };
  const std::vector<shape> shapes = {
      {body::triton_3d, gqa_layer(128), decode_batch(3, 150), 16},
      {body::triton_3d, gqa_layer(80, 40), decode_batch(2, 97), 16},
      {body::triton_2d, gqa_layer(64), batch{{70, 33}, {9, 9}}, 16},
      {body::triton_2d, gqa_layer(100), batch{{40, 25}, {1, 6}}, 7},
      {body::fi_decode, gqa_layer(128), decode_batch(2, 700), 16},  // split: decode + merge
      {body::fi_decode, gqa_layer(64), decode_batch(4, 30), 16},    // one chunk a request
  };
  int splits = 0;
  for (const auto& s : shapes) {
    const std::string what =
        std::string(to_string(d)) + " " + name_of(s.which) + " D=" + std::to_string(s.l.head_size);
    const auto sep = run_layout<T>(s.l, s.b, s.bs, kv_layout::separate, s.which, d, no_edit);
    const auto pk = run_layout<T>(s.l, s.b, s.bs, kv_layout::packed, s.which, d, no_edit);
    EXPECT_EQ(sep.kv_buffers, 2) << what;
    EXPECT_EQ(pk.kv_buffers, 1) << what;
    for (const auto* r : {&sep, &pk}) {
      EXPECT_FALSE(r->cmp.mismatch) << what << ": " << r->cmp.detail;
      EXPECT_EQ(r->log.oob_count + r->log.uninitialized_reads + r->log.races + r->log.misuse_count, 0)
          << what << "\n"
          << r->log.describe();
    }
    splits += pk.split;
    ASSERT_EQ(sep.out.size(), pk.out.size()) << what;
    for (std::size_t i = 0; i < sep.out.size(); ++i)
      ASSERT_EQ(sep.out[i], pk.out[i]) << what << ": element " << i << " differs across layouts";
  }
  EXPECT_EQ(splits, 1);  // the merge ran once, on the long decode
}

// kv_key_row, which every body's K and V reads go through: keys and block sizes within 32 bits take
// a 32-bit division, the rest the 64-bit one; both give the row written out by hand.
TEST(KvLayout, KeyRowOnBothSidesOf32Bits) {
  struct table {  // a block table whose entry i holds 100 + i
    int64_t load(int64_t i) const { return 100 + i; }
  };
  paged_attention_inputs<bf16> p;
  p.block_size = 16, p.max_blocks_per_seq = 1 << 30, p.num_kv_heads = 2, p.kv_row_stride = 128;
  // seq 1, key 37: entry 2^30 + 2 (block 100 + 2^30 + 2), slot 5, kv head 1.
  EXPECT_EQ(kv_key_row(p, table{}, 1, 37, 1), (((100 + (int64_t{1} << 30) + 2) * 16 + 5) * 2 + 1) * 128);
  // key 2^32 + 7: entry 2^28 (block 100 + 2^28), slot 7, kv head 0: past 32 bits, the 64-bit path.
  const int64_t key = (int64_t{1} << 32) + 7;
  EXPECT_EQ(kv_key_row(p, table{}, 0, key, 0), ((100 + (int64_t{1} << 28)) * 16 + 7) * 2 * 128);
  p.block_size = (int64_t{1} << 31) + 1;  // a block size past 32 bits: the 64-bit path too
  EXPECT_EQ(kv_key_row(p, table{}, 0, key, 0), ((100 + 1) * p.block_size + (key - p.block_size)) * 2 * 128);
}

TEST(KvLayout, EveryBodyWritesTheSameOutputFromBothLayouts) {
  expect_layouts_agree<bf16>(dtype::bf16);   // tensor-core pass
  expect_layouts_agree<float>(dtype::fp32);  // CUDA-core pass
}

// The packed allocation one row (2 x head_size elements) short: the keys of its last row read past
// it, and the simulator reports those elements (and no other) against the packed extent.
TEST(KvLayout, OneRowPastThePackedAllocationIsOutOfBounds) {
  const rank_layer l = gqa_layer(64);
  const batch b = decode_batch(3, 48);  // whole blocks: every row of the cache is read
  const int64_t row = 2 * l.head_size;
  int64_t extent = 0;
  const auto drop_last_row = [&](attention_inputs<bf16>& h, sim::memory& m, sim_inputs<bf16>& in) {
    h.kv_cache.resize(h.kv_cache.size() - static_cast<std::size_t>(row));
    extent = static_cast<int64_t>(h.kv_cache.size());
    in.in.k_cache = m.upload("kv_cache", h.kv_cache);
    in.in.v_cache = view_from(in.in.k_cache, l.head_size);
  };
  for (body w : {body::triton_3d, body::triton_2d, body::fi_decode}) {
    const auto r = run_layout<bf16>(l, b, 16, kv_layout::packed, w, dtype::bf16, drop_last_row);
    EXPECT_GT(r.log.oob_count, 0) << name_of(w);
    for (const auto& a : r.log.oob) {
      EXPECT_EQ(a.buffer, "kv_cache") << name_of(w);
      EXPECT_EQ(a.extent, extent) << name_of(w);
      EXPECT_GE(a.index, extent) << name_of(w);
      EXPECT_LT(a.index, extent + row) << name_of(w);
      EXPECT_FALSE(a.write) << name_of(w);
    }
  }
}

// A body that took the separate layout's row stride on the packed cache reads inside the
// allocation (rows half as far apart: keys land in V, values in K): no bounds error, as on a GPU,
// but the output disagrees with the reference.
TEST(KvLayout, AReadInTheOtherHalfIsAWrongOutputNotABoundsError) {
  const rank_layer l = gqa_layer(64);
  const auto separate_stride = [&](attention_inputs<bf16>&, sim::memory&, sim_inputs<bf16>& in) {
    in.in.kv_row_stride = l.head_size;
  };
  for (body w : {body::triton_3d, body::fi_decode}) {
    const auto r =
        run_layout<bf16>(l, decode_batch(2, 90), 16, kv_layout::packed, w, dtype::bf16, separate_stride);
    EXPECT_EQ(r.log.oob_count, 0) << name_of(w) << "\n" << r.log.describe();
    EXPECT_TRUE(r.cmp.mismatch) << name_of(w);
  }
}

}  // namespace
}  // namespace headroom
