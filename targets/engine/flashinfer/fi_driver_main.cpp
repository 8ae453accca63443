// headroom_flashinfer_driver: the engine driver for FlashInfer's batch decode and batch prefill
// kernels (the prefill kernel also serves tensor-core decode), the counterpart of
// vllm_triton_driver.py, in the frame of native_driver.hpp. The launch's pointers are offsets into
// the guarded arena (flashinfer_launch.hpp); the page table FlashInfer reads is a separate
// allocation of exactly its size.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "targets/engine/flashinfer/fi_prefill_run.hpp"
#include "targets/engine/native/native_driver.hpp"

#ifndef HEADROOM_FLASHINFER_COMMIT
#define HEADROOM_FLASHINFER_COMMIT "unknown"
#endif

namespace {

using nlohmann::json;
namespace fi = headroom::engine::fi;
namespace native = headroom::engine::native;

// The checkout this driver was built from, also as a string in the binary (engine_lane.sh reads it).
constexpr char built_from[] = "flashinfer@" HEADROOM_FLASHINFER_COMMIT;

// The page table, the chunk size and (decode) the valid-block mask, laid out in one allocation.
struct side_tables {
  std::vector<int32_t> ints;  // indptr, indices, last_page_len, kv_chunk_size, then the mask's bytes
  int64_t indices = 0, last = 0, chunk = 0, mask = 0;
};

side_tables side_of(const json& L) {
  side_tables t;
  for (const int64_t x : L.at("indptr").get<std::vector<int64_t>>())
    t.ints.push_back(static_cast<int32_t>(x));
  t.indices = static_cast<int64_t>(t.ints.size());
  for (const int64_t x : L.at("indices").get<std::vector<int64_t>>())
    t.ints.push_back(static_cast<int32_t>(x));
  t.last = static_cast<int64_t>(t.ints.size());
  for (const int64_t x : L.at("last_page_len").get<std::vector<int64_t>>())
    t.ints.push_back(static_cast<int32_t>(x));
  t.chunk = static_cast<int64_t>(t.ints.size());
  t.ints.push_back(L.at("kv_chunk_size").get<int32_t>());
  t.mask = static_cast<int64_t>(t.ints.size());
  if (!L.contains("num_work")) return t;  // the prefill's mask is the plan's, in the arena
  const int64_t padded = L.at("padded").get<int64_t>(), valid = L.at("num_work").get<int64_t>();
  std::vector<uint8_t> mask(static_cast<std::size_t>(padded));
  for (int64_t i = 0; i < padded; ++i) mask[static_cast<std::size_t>(i)] = i < valid;
  t.ints.resize(t.ints.size() + static_cast<std::size_t>((padded + 3) / 4));
  std::memcpy(t.ints.data() + t.mask, mask.data(), mask.size());
  return t;
}

// The pointer of arena buffer `name` in the launch's "at" (null for -1).
void* arena_ptr(const json& L, std::byte* arena, const char* name) {
  const int64_t off = L.at("at").at(name).get<int64_t>();
  return off < 0 ? nullptr : arena + off;
}

fi::decode_args decode_args_of(const json& L, std::byte* arena, int32_t* side, const side_tables& t) {
  const auto ptr = [&](const char* name) { return arena_ptr(L, arena, name); };
  fi::decode_args a;
  a.type = L.at("dtype") == "bf16" ? fi::elem::bf16 : fi::elem::fp16;
  a.head_dim = L.at("head_dim"), a.num_qo_heads = L.at("num_qo_heads"), a.num_kv_heads = L.at("num_kv_heads");
  a.page_size = L.at("page_size"), a.batch_size = L.at("batch_size"), a.padded = L.at("padded");
  a.window_left = L.at("window_left"), a.sm_scale = L.at("sm_scale");
  a.q_stride_n = L.at("q_strides").at(0), a.q_stride_h = L.at("q_strides").at(1);
  for (int i = 0; i < 3; ++i) a.kv_strides[i] = L.at("kv_strides").at(i);
  a.q = ptr("q"), a.k = ptr("k"), a.v = ptr("v"), a.o = ptr("o");
  a.tmp_v = ptr("tmp_v"), a.tmp_s = static_cast<float*>(ptr("tmp_s"));
  a.request_indices = static_cast<int32_t*>(ptr("request_indices"));
  a.kv_tile_indices = static_cast<int32_t*>(ptr("kv_tile_indices"));
  a.o_indptr = static_cast<int32_t*>(ptr("o_indptr"));
  a.indptr = side, a.indices = side + t.indices, a.last_page_len = side + t.last;
  a.kv_chunk_size = side + t.chunk;
  if (L.contains("num_work"))
    a.block_valid_mask = L.at("split").get<bool>() ? reinterpret_cast<bool*>(side + t.mask) : nullptr;
  else
    a.block_valid_mask = static_cast<bool*>(ptr("block_valid_mask"));
  return a;
}

fi::prefill_args prefill_args_of(const json& L, std::byte* arena, int32_t* side, const side_tables& t) {
  fi::prefill_args a;
  static_cast<fi::decode_args&>(a) = decode_args_of(L, arena, side, t);
  a.cta_tile_q = L.at("cta_tile_q"), a.total_num_rows = L.at("total_num_rows");
  a.q_indptr = static_cast<int32_t*>(arena_ptr(L, arena, "q_indptr"));
  a.qo_tile_indices = static_cast<int32_t*>(arena_ptr(L, arena, "qo_tile_indices"));
  a.merge_indptr = static_cast<int32_t*>(arena_ptr(L, arena, "merge_indptr"));
  return a;
}

// The launch the header names, as a call that returns its error text (empty on success).
std::function<std::string()> launch_of(const json& L, std::byte* arena, int32_t* side, const side_tables& t) {
  if (L.at("kernel") == "flashinfer_batch_prefill")
    return [a = prefill_args_of(L, arena, side, t)] { return fi::launch_prefill(a); };
  return [a = decode_args_of(L, arena, side, t)] { return fi::launch_decode(a); };
}

// The launch the header names, with its page table uploaded.
native::prepared_launch prepare(const json& L, std::byte* arena) {
  auto t = std::make_shared<side_tables>(side_of(L));
  auto side = std::make_shared<native::device_buffer>(t->ints.size() * 4);
  native::check(cudaMemcpy(side->p, t->ints.data(), t->ints.size() * 4, cudaMemcpyHostToDevice),
                "side tables");
  native::prepared_launch p;
  p.call = launch_of(L, arena, static_cast<int32_t*>(side->p), *t);
  p.keep = side;
  return p;
}

}  // namespace

int main() {
  return native::serve({"flashinfer",
                        built_from + sizeof("flashinfer@") - 1,
                        {"flashinfer_batch_decode", "flashinfer_batch_prefill"},
                        prepare});
}
