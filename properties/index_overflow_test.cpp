// Property: no index arithmetic wraps. For huge geometries (up to 1e6 heads, head sizes up to
// 65536, sequences up to 2^31 - 1 tokens) the checker reports index_overflow exactly when a run's
// largest element index, computed here in 128-bit arithmetic, exceeds the kernels' 32-bit offsets
// (or a size does not fit 64 bits), and every number it reports is non-negative. Model target.
#include <algorithm>

#include "core/check/check.hpp"
#include "core/util/checked.hpp"
#include "core/util/error.hpp"
#include "generators/case_gen.hpp"
#include "properties/support/edited.hpp"
#include "properties/support/engine_view.hpp"
#include "properties/support/prop_check.hpp"

namespace headroom {
namespace {

using i128 = __int128;
constexpr i128 limit = max_kernel_index;

// Triton 3D: the largest segm_output index + 1 of the layer (segm_max is smaller).
i128 triton_exact(const triton_plan& p, const rank_layer& l, const batch& b) {
  if (!triton_uses_3d(p, b)) return 0;
  i128 end = 0;
  for (int64_t t = 0; t < b.num_seqs(); ++t) {
    int64_t s_max = -1;
    for (int64_t s = 0; s < triton_segments; ++s)
      if (triton_segment_active(s, b.seq_lens[static_cast<std::size_t>(t)])) s_max = s;
    const i128 row = (i128(t) * l.num_heads + l.num_heads - 1) * triton_segments + s_max;
    end = std::max(end, row * next_pow2(l.head_size) + l.head_size);
  }
  return end;
}

// FlashInfer decode: tmp_v's largest index + 1 (tmp_s is smaller).
i128 fi_exact(const fi_decode_plan& p, const rank_layer& l) {
  return p.split ? i128(p.num_work) * l.num_heads * l.head_size : 0;
}

// True when some run's index exceeds 32 bits or some size does not fit 64 bits.
bool expect_overflow(const check_case& c) {
  const engine e = make_engine(c);
  for (const auto& g : e.groups) {
    const head_resolution hr = props::resolution_of(c, e, g);
    if (hr.disagreement) continue;
    try {
      for (const auto& p : props::plans_for(c, e, g, hr.builder_heads, c.b))
        for (const rank_layer* l : props::layers_of(e, g)) {
          const i128 end = std::holds_alternative<triton_plan>(p.plan)
                               ? triton_exact(std::get<triton_plan>(p.plan), *l, p.b)
                               : fi_exact(std::get<fi_decode_plan>(p.plan), *l);
          if (end - 1 > limit) return true;
        }
    } catch (const overflow_error&) {
      return true;  // a plan size itself does not fit 64 bits
    }
  }
  return false;
}

void no_wraparound(const check_case& c, executor& ex) {
  report r;
  try {
    r = run_case(c, ex);
  } catch (const std::exception& e) {
    RC_FAIL(std::string("run_case threw: ") + e.what());
  }
  bool reported = false;
  for (const auto& v : r.violations) {
    reported = reported || v.inv == invariant::index_overflow;
    if (v.capacity_bytes < 0 || v.required_bytes < 0)
      RC_FAIL(std::string(to_string(v.inv)) + " " + v.buffer +
              " reports a negative size: wrapped arithmetic");
  }
  const bool expected = expect_overflow(c);
  RC_CLASSIFY(expected, "beyond 32-bit offsets");
  RC_TAG(to_string(c.be));
  if (reported != expected)
    RC_FAIL(std::string("index_overflow ") + (reported ? "reported" : "not reported") +
            " but the 128-bit computation says " + (expected ? "overflow" : "fits"));
}

const props::budget budget{2000, 0, 100};
const std::vector<policy> policies = {policy::per_layer, policy::model_wide, policy::max};

TEST(IndexOverflow, ReportedExactlyWhenBeyond32Bits) {
  props::check(
      [] {
        model_executor model;
        no_wraparound(*generators::large_cases(policies), model);
      },
      budget);
}

TEST(IndexOverflow, DetectsWrappingArithmetic) {
  const auto r = props::run(
      [] {
        // arithmetic that wraps at 32 bits
        model_executor formulas;
        props::edited_executor model(formulas, [](observation& o) {
          for (auto& t : o.touched) t.elems = static_cast<int32_t>(static_cast<uint32_t>(t.elems));
        });
        no_wraparound(*generators::large_cases(policies), model);
      },
      budget);
  ASSERT_TRUE(props::is_failure(r)) << "32-bit wrapping went unnoticed";
}

// C6 (docs/catalogue.md): under 32-bit token offsets, index_overflow of class C6 exactly when, in
// 128 bits, the last element of q or of the output passes 2^31 - 1; never with 64-bit offsets. q is
// a view of the fused qkv projection (vLLM): row (H + H_kv) x D + H_kv x D_v, last element
// (T - 1) x row + H x D - 1; the output is contiguous: T x H x D_v - 1.
void token_offsets_wrap_exactly(const check_case& c, executor& ex) {
  const report r = run_case(c, ex);
  bool reported = false;
  for (const auto& v : r.violations)
    reported = reported || (v.cls == bug_class::c6 && v.inv == invariant::index_overflow);
  const auto& l = c.model.layers.front();
  const i128 t = c.b.num_tokens(), dv = l.head_size_v > 0 ? l.head_size_v : l.head_size;
  const i128 row = i128(l.num_heads + l.num_kv_heads) * l.head_size + i128(l.num_kv_heads) * dv;
  const i128 q_last = (t - 1) * row + i128(l.num_heads) * l.head_size - 1,
             out_last = t * l.num_heads * dv - 1;
  const bool expected = has_mutant(c.mutants, "int32-token-offsets") && std::max(q_last, out_last) > limit;
  RC_CLASSIFY(expected, "past 2^31");
  if (reported != expected)
    RC_FAIL(std::string("C6 index_overflow ") + (reported ? "reported" : "not reported") + " at " +
            std::to_string(c.b.num_tokens()) + " tokens of " + std::to_string(l.num_heads) + " x " +
            std::to_string(l.head_size));
}

TEST(IndexOverflow, TokenOffsetsWrapExactlyPast2To31) {
  props::check(
      [] {
        model_executor model;
        token_offsets_wrap_exactly(*generators::large_offset_cases(), model);
      },
      budget);
}

TEST(IndexOverflow, DetectsLostTokenOffsetWraps) {
  const auto r = props::run(
      [] {
        // an executor that loses the wrap count
        model_executor formulas;
        props::edited_executor model(formulas, [](observation& o) { o.index_overflows = 0; });
        token_offsets_wrap_exactly(*generators::large_offset_cases(), model);
      },
      budget);
  ASSERT_TRUE(props::is_failure(r)) << "a lost wrap count went unnoticed";
}

}  // namespace
}  // namespace headroom
