// headroom_fa3_driver: FA3's scheduler preparation (prepare_varlen_num_blocks, the kernel
// mha_fwd_get_scheduler_metadata launches) as an engine driver (native_driver.hpp). The launch
// carries the call vLLM's FlashAttention builder makes (fa3_launch.hpp); FA3's host rules
// (fa3_schedule.hpp) set the params and the layout, whose pointers are into the persistent buffer
// in the arena, so FA3's kernel writes where vLLM's buffer ends. Before launching, the driver checks
// the layout against the plan's (`expect`): a difference means headroom's mirror
// (core/backends/fa3*) no longer computes what FA3 does, and the run is refused with both.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

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
  if (L.at("headdim_v") != L.at("headdim"))
    throw std::invalid_argument("vLLM's FA3 call has head size v = head size");
  fa3::schedule_call c;
  c.batch = L.at("batch_size");
  c.max_seqlen_q = L.at("max_seqlen_q"), c.max_seqlen_k = L.at("max_seqlen_k");
  c.num_heads = L.at("num_heads"), c.num_heads_k = L.at("num_heads_k");
  c.headdim = L.at("headdim"), c.page_size = L.at("page_size");
  c.causal = L.at("causal"), c.e4m3 = L.at("e4m3");
  c.window_left = L.at("window_left"), c.window_right = L.at("window_right");
  c.num_splits = L.at("num_splits");
  return c;
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
  out.call = [s]() mutable -> std::string {
    prepare_varlen_num_blocks(s.params, nullptr, s.params.pack_gqa, s.block_m, s.block_n, false);
    const cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? "" : std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
  };
  return out;
}

}  // namespace

int main() {
  return native::serve(
      {"fa3", built_from + sizeof("flash-attention@") - 1, {"fa3_prepare_scheduler"}, prepare});
}
