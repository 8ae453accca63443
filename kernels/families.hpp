// The launch plan of every kernel family, stated once: which bodies a family launches, in which
// order, with which compile-time head layout, and which buffer handles its params hold.
//
// Every caller runs a family through a Launch policy of its own, a type with
//   template <class K> void run(const typename K::params& p);
// called once per kernel, in launch order: the simulator (checked or native), the GPU worker (the
// zero-cost or the device-checked context, with the guard check behind each launch), the simulated
// worker of the tests and the benchmark. The policy decides how a body runs; this file decides
// which bodies run (CUTLASS's device adapters and FlashInfer's host launchers split it the same way).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/fa3_scheduler.hpp"
#include "kernels/fi_decode.hpp"
#include "kernels/fi_prefill.hpp"
#include "kernels/mqa_metadata.hpp"
#include "kernels/offset_probe.hpp"
#include "kernels/request_meta.hpp"
#include "kernels/triton_attention.hpp"

namespace headroom {

// The families a run can launch (the GPU wire format carries this value).
enum class kernel_family : int32_t {
  triton,         // triton_attention 3D + triton_segment_reduce, or triton_attention 2D
  fi_decode,      // fi_batch_decode, then fi_merge_states when the plan splits the kv
  fa3_scheduler,  // fa3_scheduler: FA3's scheduler metadata for one batch
  request_meta,   // request_meta_fill: per-request FlashInfer metadata of a padded batch
  mqa_metadata,   // mqa_metadata: DeepGEMM's SM90 paged-MQA-logits scheduler
  offset_probe,   // offset_probe: the attention bodies' token offset for one element
  fi_prefill,     // fi_batch_prefill, then fi_prefill_merge when the plan splits the kv (last: the
                  // GPU wire lists the families before it in this order)
};

// The compile-time head layout of a head size: the smallest of 64, 128, 256 and 512 that holds it.
inline int64_t layout_dp(int64_t head_size) {
  if (head_size < 1 || head_size > max_kernel_head_size)
    throw std::invalid_argument("head size " + std::to_string(head_size) + " is not in 1.." +
                                std::to_string(max_kernel_head_size));
  if (head_size <= 64) return 64;
  if (head_size <= 128) return 128;
  if (head_size <= 256) return 256;
  return 512;
}

// Calls f.template operator()<Dp>() with the head layout of head_size: the one switch over layouts.
template <class F>
void with_head_layout(int64_t head_size, F&& f) {
  switch (layout_dp(head_size)) {
    case 64:
      return f.template operator()<64>();
    case 128:
      return f.template operator()<128>();
    case 256:
      return f.template operator()<256>();
    default:
      return f.template operator()<512>();
  }
}

// Triton unified attention: the 3D kernel and its reduce for a segmented (pure decode, batch up to
// the plan's threshold) step, else the 2D kernel alone.
template <class T, int Dp, class Launch>
void launch_plan(Launch& launch, const triton_params<T>& p) {
  if (p.segmented) {
    launch.template run<triton_attention<T, Dp, true>>(p);
    launch.template run<triton_segment_reduce<T, Dp>>(p);
  } else {
    launch.template run<triton_attention<T, Dp, false>>(p);
  }
}

// FlashInfer batch decode: the split-KV decode, then the merge of the partial states when split.
template <class T, int Dp, class Launch>
void launch_plan(Launch& launch, const fi_decode_params<T>& p) {
  launch.template run<fi_batch_decode<T, Dp>>(p);
  if (p.split) launch.template run<fi_merge_states<T, Dp>>(p);
}

// FlashInfer batch prefill over the paged cache: the prefill (its warpgroup kernel where that runs
// the tile pass), then the merge of the partial states when split.
template <class T, int Dp, class Launch>
void launch_plan(Launch& launch, const fi_prefill_params<T>& p) {
  with_prefill_kernel<T, Dp>(p, [&]<class K>() { launch.template run<K>(p); });
  if (p.split) launch.template run<fi_prefill_merge<T, Dp>>(p);
}

// What each family's params are: its element type and family id.
template <class P>
struct family_traits;
template <class T>
struct family_traits<triton_params<T>> {
  using elem = T;
  static constexpr kernel_family id = kernel_family::triton;
};
template <class T>
struct family_traits<fi_decode_params<T>> {
  using elem = T;
  static constexpr kernel_family id = kernel_family::fi_decode;
};
template <class T>
struct family_traits<fi_prefill_params<T>> {
  using elem = T;
  static constexpr kernel_family id = kernel_family::fi_prefill;
};

// The families of one body that does not depend on the element type (an engine step's metadata,
// the offset probe): their launch plan is that body, once.
template <class K, kernel_family F>
struct single_body_family {
  using kernel = K;
  static constexpr kernel_family id = F;
};
template <>
struct family_traits<fa3_scheduler_params> : single_body_family<fa3_scheduler, kernel_family::fa3_scheduler> {
};
template <>
struct family_traits<request_meta_params>
    : single_body_family<request_meta_fill, kernel_family::request_meta> {};
template <>
struct family_traits<mqa_metadata_params> : single_body_family<mqa_metadata, kernel_family::mqa_metadata> {};
template <>
struct family_traits<offset_probe_params> : single_body_family<offset_probe, kernel_family::offset_probe> {};

// Runs a family's launch plan (an attention family at the head layout of its params).
template <class Launch, class P>
void launch_family(Launch& launch, const P& p) {
  if constexpr (requires { typename family_traits<P>::kernel; }) {
    launch.template run<typename family_traits<P>::kernel>(p);
  } else {
    using T = typename family_traits<P>::elem;
    with_head_layout(p.in.head_size, [&]<int Dp>() { launch_plan<T, Dp>(launch, p); });
  }
}

// The buffer handles of each family's params, for a caller that points them at its own memory
// (patch_refs). The size checks catch a params struct that grew a handle this list does not know.
template <class T, class F>
void for_each_input_ref(paged_attention_inputs<T>& in, F&& f) {
  f(in.q), f(in.k_cache), f(in.v_cache), f(in.block_table), f(in.seq_lens), f(in.query_start);
}

template <class T, class F>
void for_each_ref(triton_params<T>& p, F&& f) {
  static_assert(sizeof(triton_params<T>) ==
                    sizeof(paged_attention_inputs<T>) + 4 * sizeof(buffer_ref<float>) + 3 * sizeof(int64_t),
                "triton_params changed: update for_each_ref");
  for_each_input_ref(p.in, f);
  f(p.output), f(p.segm_output), f(p.segm_max), f(p.segm_expsum);
}

template <class T, class F>
void for_each_ref(fi_decode_params<T>& p, F&& f) {
  static_assert(sizeof(fi_decode_params<T>) == sizeof(paged_attention_inputs<T>) +
                                                   6 * sizeof(buffer_ref<float>) + 3 * sizeof(int64_t) + 8,
                "fi_decode_params changed: update for_each_ref");
  for_each_input_ref(p.in, f);
  f(p.request_indices), f(p.kv_tile_indices), f(p.o_indptr), f(p.output), f(p.tmp_v), f(p.tmp_s);
}

template <class T, class F>
void for_each_ref(fi_prefill_params<T>& p, F&& f) {
  static_assert(sizeof(fi_prefill_params<T>) == sizeof(paged_attention_inputs<T>) +
                                                    9 * sizeof(buffer_ref<float>) + 4 * sizeof(int64_t) + 8 +
                                                    sizeof(fastdiv32) /* split, group_div */,
                "fi_prefill_params changed: update for_each_ref");
  for_each_input_ref(p.in, f);
  f(p.request_indices), f(p.qo_tile_indices), f(p.kv_tile_indices), f(p.o_indptr), f(p.merge_indptr);
  f(p.block_valid_mask), f(p.output), f(p.tmp_v), f(p.tmp_s);
}

template <class F>
void for_each_ref(fa3_scheduler_params& p, F&& f) {
  f(p.metadata), f(p.query_start), f(p.seq_lens);
}
template <class F>
void for_each_ref(request_meta_params& p, F&& f) {
  f(p.indptr_src), f(p.last_page_len_src), f(p.indptr), f(p.last_page_len);
}
template <class F>
void for_each_ref(mqa_metadata_params& p, F&& f) {
  f(p.context_lens), f(p.schedule);
}
template <class F>
void for_each_ref(offset_probe_params& p, F&& f) {
  f(p.out);
}

// The one patching helper: points every buffer handle of p at `resolve(ref)` (a void* to the start
// of the handle's buffer id) plus the handle's offset (a view inside its buffer: buffer_ref);
// handles with id -1 become null. resolve may throw when a handle's offset, extent or element size
// disagrees with the memory it names.
template <class P, class Resolve>
void patch_refs(P& p, Resolve&& resolve) {
  for_each_ref(p, [&](auto& r) {
    using ptr = decltype(r.data);
    r.data = r.id < 0 ? nullptr : static_cast<ptr>(resolve(r)) + r.offset;
  });
}

}  // namespace headroom
