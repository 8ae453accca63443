// headroom_fa3_driver: FA3's scheduler preparation (prepare_varlen_num_blocks, the kernel
// mha_fwd_get_scheduler_metadata launches) as an engine driver (native_driver.hpp). The launch
// carries the call vLLM's FlashAttention builder makes (fa3_launch.hpp); this driver sets FA3's
// params from it as mha_fwd_get_scheduler_metadata does in vllm-project/flash-attention
// hopper/flash_api.cpp (the mask's normalisation, paged-KV TMA, the split count, GQA packing, the
// layout of the metadata tensor), taking the tile, the one-warpgroup choice, the packing test and
// the split heuristic from FA3's own headers (tile_size.h, heuristics.h). The layout's pointers
// are into the persistent buffer in the arena, so FA3's kernel writes where vLLM's buffer ends.
// Before launching, the driver checks the layout against the plan's (`expect`): a difference means
// headroom's mirror (core/backends/fa3*) no longer computes what FA3 does, and the run is refused
// with both.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "flash.h"
#include "heuristics.h"
#include "targets/engine/native/native_driver.hpp"
#include "tile_size.h"

#ifndef HEADROOM_FA3_COMMIT
#define HEADROOM_FA3_COMMIT "unknown"
#endif

namespace {

using nlohmann::json;
namespace native = headroom::engine::native;

constexpr char built_from[] = "flash-attention@" HEADROOM_FA3_COMMIT;
constexpr int varlen_max_batches_1cta = 992;  // PREPARE_VARLEN_MAX_BATCHES_1CTA

// FA3's head-size rounding (every head size compiled: 64, 96, 128, 192, 256).
int rounded_head(int d) { return d <= 64 ? 64 : d <= 96 ? 96 : d <= 128 ? 128 : d <= 192 ? 192 : 256; }

std::tuple<int, int, bool, bool> tile_of(const Flash_fwd_params& p, bool paged_kv_non_tma) {
  return tile_size_fwd_sm90(p.d_rounded, p.dv_rounded, p.is_causal, p.is_local, p.is_e4m3 ? 1 : 2, false,
                            paged_kv_non_tma, p.softcap > 0.f, use_one_mma_wg(p));
}

// Paged KV through TMA: a paged, non-local call whose page holds whole key blocks and whose packed
// query outgrows one m-block.
bool paged_kv_tma(const Flash_fwd_params& p) {
  if (p.arch < 90 || !p.page_table || p.leftpad_k || p.knew_ptr || p.is_local) return false;
  const auto [block_m, block_n, mma1, rs] = tile_of(p, false);
  return p.page_size % block_n == 0 && p.seqlen_q * (p.h / p.h_k) > block_m;
}

// The split count FA3 picks when told 0: the varlen case counts as one request (an upper bound the
// dynamic split refines per request), the query packed over the group.
int heuristic_splits(const Flash_fwd_params& p) {
  const auto [block_m, block_n, mma1, rs] = tile_of(p, p.page_table && !p.pagedkv_tma);
  const int loaded_k =
      !p.is_local ? p.seqlen_k
                  : std::max(0, std::min(p.seqlen_k, p.window_size_right + p.window_size_left + 1 + block_m));
  const int n_blocks = (loaded_k + block_n - 1) / block_n;
  const int m_blocks = (p.seqlen_q * (p.h / p.h_k) + block_m - 1) / block_m;
  // FA3 computes a kv head's bytes in int. Its wrap past 2^31 is reproduced by a modular conversion
  // (defined, unlike the overflow), so a split count it changes shows as a refused layout.
  const int64_t kv_head_bytes = int64_t{p.seqlen_k} * (p.d + p.dv) * (p.is_e4m3 ? 1 : 2);
  const int one_kv_head = static_cast<int32_t>(static_cast<uint32_t>(kv_head_bytes));
  const int total_m_blocks = (p.num_splits_dynamic_ptr ? 1 : p.b) * p.h_k * m_blocks;
  return num_splits_heuristic(total_m_blocks, p.num_sm, n_blocks, m_blocks, one_kv_head,
                              p.is_causal || p.is_local, 128);
}

bool packs_gqa(const Flash_fwd_params& p) {
  if (p.arch < 90 || (p.page_table && !p.pagedkv_tma) || p.num_splits > 1) return true;
  if (p.h / p.h_k == 8 && p.is_local && p.d == 64 && p.dv == p.d) return true;
  const auto [block_m, block_n, mma1, rs] = tile_of(p, p.page_table && !p.pagedkv_tma);
  return should_pack_gqa(p.cu_seqlens_q || p.seqused_q, p.seqlen_q, p.h / p.h_k, block_m);
}

int device_sms(int* arch) {
  int dev = 0, sms = 0, major = 0, minor = 0;
  native::check(cudaGetDevice(&dev), "cudaGetDevice");
  native::check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "SM count");
  native::check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev), "arch");
  native::check(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev), "arch");
  *arch = major * 10 + minor;
  return sms;
}

// The call's params, as mha_fwd_get_scheduler_metadata sets them (sm_margin 0, no softcap, no
// appended KV, no left padding).
Flash_fwd_params params_of(const json& L, std::byte* arena) {
  Flash_fwd_params p{};
  const auto ptr = [&](const char* name) {
    return reinterpret_cast<int*>(arena + L.at("at").at(name).get<int64_t>());
  };
  p.is_e4m3 = L.at("e4m3").get<bool>();
  p.is_bf16 = !p.is_e4m3;
  p.b = L.at("batch_size");
  p.seqlen_q = L.at("max_seqlen_q"), p.seqlen_k = L.at("max_seqlen_k");
  p.h = L.at("num_heads"), p.h_k = L.at("num_heads_k");
  p.d = L.at("headdim"), p.dv = L.at("headdim_v");
  if (p.dv != p.d) throw std::invalid_argument("vLLM's FA3 call has head size v = head size");
  p.d_rounded = p.dv_rounded = rounded_head(p.d);
  p.cu_seqlens_q = ptr("cu_seqlens_q");
  p.seqused_k = ptr("seqused_k");
  int left = L.at("window_left"), right = L.at("window_right");
  bool causal = L.at("causal");
  if (left >= p.seqlen_k - 1) left = -1;
  if (right >= p.seqlen_q - 1) right = -1;
  // One query row without a window: causal changes nothing, and FA3 keeps it only where it picks
  // the tile (head size in (64, 128] with a paged cache, which vLLM's always is).
  if (p.seqlen_q == 1 && left == -1 && right == -1 && (p.d <= 64 || p.d > 128)) causal = false;
  if (causal) right = 0;
  p.is_causal = left < 0 && right == 0;
  p.is_local = (left >= 0 || right >= 0) && !p.is_causal;
  if (left < 0 && right >= 0) left = p.seqlen_k - 1;
  if (left >= 0 && right < 0) right = p.seqlen_q - 1;
  p.window_size_left = left, p.window_size_right = right;
  p.num_sm = device_sms(&p.arch);
  p.page_size = L.at("page_size");
  p.page_table = reinterpret_cast<int*>(1);  // paged: a marker, as FA3 sets it (never read here)
  p.prepare_varlen_pdl = p.b <= varlen_max_batches_1cta;
  p.num_splits_dynamic_ptr = reinterpret_cast<int*>(1);  // the heuristic's varlen case
  p.pagedkv_tma = paged_kv_tma(p);
  const int splits = L.at("num_splits");
  p.num_splits = splits <= 0 ? heuristic_splits(p) : splits;
  p.pack_gqa = packs_gqa(p) || p.num_splits > 1;
  return p;
}

native::prepared_launch prepare(const json& L, std::byte* arena) {
  native::prepared_launch out;
  // FA3's own check before anything else: the call raises, as in the engine.
  if (const int h = L.at("num_heads"), h_k = L.at("num_heads_k"); h_k <= 0 || h % h_k != 0) {
    out.call = [] {
      return std::string("FA3: Number of heads in key/value must divide number of heads in query");
    };
    return out;
  }
  Flash_fwd_params p = params_of(L, arena);
  // The metadata tensor: per request vectors of r = round_up(b, 4) entries (16-byte aligned), in
  // the order prepare_seqlen_q, dynamic splits (one CTA and more than one split), heads in L2
  // (head swizzle: causal or local), then the tile semaphore (always on SM90).
  const bool dynamic_split = p.b <= varlen_max_batches_1cta && p.num_splits > 1;
  const bool needs_semaphore = p.arch >= 90 || p.num_splits > 1;
  p.varlen_sort_batches = false;
  p.head_swizzle = p.is_causal || p.is_local;
  const int r = (p.b + 3) / 4 * 4;
  const int nvec = 1 + int(dynamic_split) + int(p.head_swizzle);
  const int entries = int(needs_semaphore) + nvec * r;
  int* md = reinterpret_cast<int*>(arena + L.at("at").at("scheduler_metadata").get<int64_t>());
  p.prepare_seqlen_q_ptr = md;
  p.num_splits_dynamic_ptr = dynamic_split ? md + r : nullptr;
  p.varlen_batch_idx_ptr = nullptr;
  p.num_nheads_in_l2_ptr = p.head_swizzle ? md + (nvec - 1) * r : nullptr;
  p.tile_count_semaphore = needs_semaphore ? md + nvec * r : nullptr;
  const auto [block_m, block_n, mma1, rs] = tile_of(p, p.page_table && !p.pagedkv_tma);
  out.report = {{"fa3",
                 {{"entries", entries},
                  {"num_splits", p.num_splits},
                  {"dynamic_split", dynamic_split},
                  {"head_swizzle", p.head_swizzle},
                  {"pack_gqa", p.pack_gqa},
                  {"causal", p.is_causal},
                  {"local", p.is_local},
                  {"block_m", block_m},
                  {"block_n", block_n},
                  {"num_sm", p.num_sm}}}};
  const json& want = L.at("expect");
  if (want.at("entries") != entries || want.at("num_splits") != p.num_splits)
    throw std::invalid_argument("FA3's rules give " + std::to_string(entries) + " entries and " +
                                std::to_string(p.num_splits) + " splits for this call, headroom's plan " +
                                want.at("entries").dump() + " and " + want.at("num_splits").dump() + " (" +
                                out.report.dump() + ")");
  out.call = [p, block_m = block_m, block_n = block_n]() mutable -> std::string {
    prepare_varlen_num_blocks(p, nullptr, p.pack_gqa, block_m, block_n, false);
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
