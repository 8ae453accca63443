// headroom_fa3_driver: FA3's scheduler preparation (prepare_varlen_num_blocks, the kernel
// mha_fwd_get_scheduler_metadata launches) as an engine driver (native_driver.hpp), then, when the
// launch carries it, the layer's attention call on that metadata (FA3's forward kernel and its
// split combine, fa3_attention.hpp). The launch carries the call vLLM's FlashAttention builder makes
// (fa3_launch.hpp); FA3's host rules (fa3_schedule.hpp) set the params and the layout, whose
// pointers are into the persistent buffer in the arena, so FA3's kernel writes where vLLM's buffer
// ends; the attention call's tensors are in the arena too (fa3_attention_inputs.hpp). Before
// launching, the driver checks the layout and split counts against the plan's (`expect`): a
// difference means headroom's mirror (core/backends/fa3*) no longer computes what FA3 does, and the
// run is refused with both. A launch marked in_call is a call vLLM made without scheduler_metadata:
// the attention call's own launch prepares the metadata (FA3's run_mha_fwd, as mha_fwd does when
// given none), into the buffer the launch names, sized as mha_fwd allocates it.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "targets/engine/fa3/fa3_attention.hpp"
#include "targets/engine/fa3/fa3_schedule.hpp"
#include "targets/engine/native/native_driver.hpp"

#ifndef HEADROOM_FA3_COMMIT
#define HEADROOM_FA3_COMMIT "unknown"
#endif

namespace {

using nlohmann::json;
namespace native = headroom::engine::native;
namespace fa3 = headroom::engine::fa3;

constexpr char built_from[] = "flash-attention@" HEADROOM_FA3_COMMIT;

// The device's SM count and architecture, as FA3 reads them: queried once, on the first run.
struct device_info {
  int arch = 0, sms = 0;
};
const device_info& device() {
  static const device_info d = [] {
    int dev = 0, major = 0, minor = 0;
    device_info i;
    native::check(cudaGetDevice(&dev), "cudaGetDevice");
    native::check(cudaDeviceGetAttribute(&i.sms, cudaDevAttrMultiProcessorCount, dev), "SM count");
    native::check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev), "arch");
    native::check(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev), "arch");
    i.arch = major * 10 + minor;
    return i;
  }();
  return d;
}

fa3::schedule_call call_of(const json& L) {
  fa3::schedule_call c;
  c.batch = L.at("batch_size");
  c.max_seqlen_q = L.at("max_seqlen_q"), c.max_seqlen_k = L.at("max_seqlen_k");
  c.num_heads = L.at("num_heads"), c.num_heads_k = L.at("num_heads_k");
  c.headdim = L.at("headdim"), c.headdim_v = L.at("headdim_v"), c.page_size = L.at("page_size");
  c.causal = L.at("causal"), c.e4m3 = L.at("e4m3");
  c.window_left = L.at("window_left"), c.window_right = L.at("window_right");
  c.num_splits = L.at("num_splits");
  return c;
}

// The layer's attention call of launch L (whose schedule call is `sched`), its tensors at their
// arena offsets and the metadata the schedule writes.
fa3::attention attention_of(const json& A, const fa3::schedule_call& sched, std::byte* arena, int* metadata,
                            const json& L) {
  fa3::attention_call c;
  c.run = sched;  // the step's batch, lengths and page size
  c.run.num_heads = A.at("num_heads"), c.run.num_heads_k = A.at("num_heads_k");
  c.run.window_left = A.at("window_left"), c.run.window_right = A.at("window_right");  // the layer's
  c.run.headdim = A.at("headdim"), c.run.headdim_v = A.at("headdim_v"), c.run.num_splits = A.at("num_splits");
  c.total_q = A.at("total_q"), c.num_pages = A.at("num_pages"), c.pages_per_seq = A.at("pages_per_seq");
  c.kv_row_stride = A.at("kv_row_stride");
  c.softmax_scale = A.at("softmax_scale");
  if (std::string why = fa3::refusal(c.run); !why.empty()) throw std::invalid_argument(why);
  const auto at = [&](const char* name) -> void* {
    const int64_t off = A.at("at").at(name);
    return off < 0 ? nullptr : arena + off;
  };
  fa3::attention_tensors t;
  t.q = at("q"), t.k = at("k_cache"), t.v = at("v_cache"), t.out = at("output");
  t.page_table = static_cast<int*>(at("block_table"));
  t.cu_seqlens_q = reinterpret_cast<int*>(arena + L.at("at").at("cu_seqlens_q").get<int64_t>());
  t.seqused_k = reinterpret_cast<int*>(arena + L.at("at").at("seqused_k").get<int64_t>());
  t.metadata = metadata;
  t.softmax_lse = static_cast<float*>(at("softmax_lse"));
  t.out_accum = static_cast<float*>(at("out_accum"));
  t.softmax_lse_accum = static_cast<float*>(at("softmax_lse_accum"));
  return fa3::attention_of(c, device().arch, device().sms, t);
}

// Refuses an attention call whose kernels this driver lacks, or whose metadata length or split
// count FA3's rules give otherwise than the plan (the engine side sends only calls it expects to
// run on the scheduled metadata).
void check_attention(const fa3::attention& a, const fa3::schedule& s, const json& A) {
  if (std::string why = fa3::unbuilt(a); !why.empty()) throw std::invalid_argument("FA3 attention: " + why);
  const Flash_fwd_params& p = a.s.params;
  if (a.s.entries != s.entries || A.at("expect").at("num_splits") != p.num_splits)
    throw std::invalid_argument("FA3's rules run the layer with " + std::to_string(p.num_splits) +
                                " splits on metadata of " + std::to_string(a.s.entries) +
                                " entries (scheduled: " + std::to_string(s.entries) + "), headroom's plan " +
                                A.at("expect").at("num_splits").dump() + " splits");
  const bool accum = A.at("at").at("out_accum").get<int64_t>() >= 0;
  if (accum != a.splits)
    throw std::invalid_argument("FA3 attention: out_accum given for an unsplit call, or none");
}

native::prepared_launch prepare(const json& L, std::byte* arena) {
  native::prepared_launch out;
  const fa3::schedule_call c = call_of(L);
  if (std::string why = fa3::refusal(c); !why.empty()) {  // FA3 raises, as in the engine
    out.call = [why] { return why; };
    return out;
  }
  const auto ptr = [&](const char* name) {
    return reinterpret_cast<int*>(arena + L.at("at").at(name).get<int64_t>());
  };
  fa3::schedule s = fa3::schedule_of(c, device().arch, device().sms, ptr("cu_seqlens_q"), ptr("seqused_k"));
  fa3::point_into(s, ptr("scheduler_metadata"));
  const Flash_fwd_params& p = s.params;
  out.report = {{"fa3",
                 {{"entries", s.entries},
                  {"num_splits", p.num_splits},
                  {"dynamic_split", s.dynamic_split},
                  {"head_swizzle", p.head_swizzle},
                  {"pack_gqa", p.pack_gqa},
                  {"causal", p.is_causal},
                  {"local", p.is_local},
                  {"block_m", s.block_m},
                  {"block_n", s.block_n},
                  {"num_sm", p.num_sm}}}};
  const json& want = L.at("expect");
  if (want.at("entries") != s.entries || want.at("num_splits") != p.num_splits)
    throw std::invalid_argument("FA3's rules give " + std::to_string(s.entries) + " entries and " +
                                std::to_string(p.num_splits) + " splits for this call, headroom's plan " +
                                want.at("entries").dump() + " and " + want.at("num_splits").dump() + " (" +
                                out.report.dump() + ")");
  const bool in_call = L.at("in_call");
  out.report["fa3"]["in_call"] = in_call;
  std::optional<fa3::attention> att;
  if (L.contains("attention")) {
    const json& A = L.at("attention");
    att = attention_of(A, c, arena, ptr("scheduler_metadata"), L);
    check_attention(*att, s, A);
    att->s.params.skip_scheduler_metadata_computation = !in_call;
    const Flash_fwd_params& r = att->s.params;
    out.report["fa3"]["attention"] = {{"num_splits", r.num_splits}, {"pack_gqa", r.pack_gqa},
                                      {"causal", r.is_causal},      {"local", r.is_local},
                                      {"block_m", att->s.block_m},  {"block_n", att->s.block_n},
                                      {"entries", att->s.entries}};
  }
  out.call = [s, att, in_call]() mutable -> std::string {
    if (att && in_call) return fa3::run_attention(*att);  // the forward launch prepares
    // Scheduled ahead (mha_fwd_get_scheduler_metadata), or a call whose attention kernels are not
    // built here: the preparation alone, with the same params.
    prepare_varlen_num_blocks(s.params, nullptr, s.params.pack_gqa, s.block_m, s.block_n, false);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
    return att ? fa3::run_attention(*att) : std::string();
  };
  return out;
}

}  // namespace

int main() {
  return native::serve(
      {"fa3", built_from + sizeof("flash-attention@") - 1, {"fa3_prepare_scheduler"}, prepare});
}
