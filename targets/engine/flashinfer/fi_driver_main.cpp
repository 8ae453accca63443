// headroom_flashinfer_driver: the engine driver for FlashInfer's batch decode and batch prefill
// kernels (the prefill kernel also serves tensor-core decode), the counterpart of
// vllm_triton_driver.py, speaking the same frames on descriptor driver_channel_fd
// (driver_process.hpp): a hello, then per run a JSON header {arena_bytes, fill, readback, launch}
// and the fill bytes in, a JSON header {status, detail, kernel_ms, exiting} and the readback bytes
// out. The arena is one cudaMalloc, written as the header says; the launch's pointers are offsets
// into it (flashinfer_launch.hpp), so a kernel that indexes past a buffer lands in its guard band.
// The page table FlashInfer reads is a separate allocation of exactly its size. "repeat": N in the
// header (a microbenchmark) adds the median of N more launches, each after an L2 flush.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "targets/engine/driver_process.hpp"
#include "targets/engine/flashinfer/fi_prefill_run.hpp"
#include "targets/gpu/worker/wire.hpp"

#ifndef HEADROOM_FLASHINFER_COMMIT
#define HEADROOM_FLASHINFER_COMMIT "unknown"
#endif

namespace {

using nlohmann::json;
namespace fi = headroom::engine::fi;

// The checkout this driver was built from, also as a string in the binary (engine_lane.sh reads it).
constexpr char built_from[] = "flashinfer@" HEADROOM_FLASHINFER_COMMIT;

struct cuda_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw cuda_error(std::string(what) + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
}

struct device_buffer {
  void* p = nullptr;
  explicit device_buffer(std::size_t bytes) { check(cudaMalloc(&p, bytes < 16 ? 16 : bytes), "cudaMalloc"); }
  ~device_buffer() { cudaFree(p); }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  std::byte* bytes() const { return static_cast<std::byte*>(p); }
};

// Two events around a launch, destroyed on every path out.
struct event_pair {
  cudaEvent_t begin = nullptr, end = nullptr;
  event_pair() { check(cudaEventCreate(&begin), "event"), check(cudaEventCreate(&end), "event"); }
  ~event_pair() { cudaEventDestroy(begin), cudaEventDestroy(end); }
  event_pair(const event_pair&) = delete;
  event_pair& operator=(const event_pair&) = delete;
  float ms() const {
    float t = 0;
    check(cudaEventElapsedTime(&t, begin, end), "event");
    return t;
  }
};

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

// A microbenchmark's figure: the median of n launches, each after an L2 flush (a memset of twice
// the L2) and a spin that covers the host's launch latency, timed with events.
constexpr long long spin_cycles = 2'000'000;  // as vllm_triton_driver.py's
double median_ms(const std::function<std::string()>& launch, int n) {
  int dev = 0, l2 = 0;
  check(cudaGetDevice(&dev), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev), "L2 size");
  device_buffer flush(2 * static_cast<std::size_t>(l2));
  const event_pair ev;
  std::vector<float> ms(static_cast<std::size_t>(n));
  for (auto& t : ms) {
    check(cudaMemset(flush.p, 0, 2 * static_cast<std::size_t>(l2)), "flush");
    fi::spin_device(spin_cycles);
    check(cudaEventRecord(ev.begin), "event");
    if (const std::string e = launch(); !e.empty()) throw cuda_error(e);
    check(cudaEventRecord(ev.end), "event");
    check(cudaEventSynchronize(ev.end), "timed launch");
    t = ev.ms();
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// One run: {status, detail, kernel_ms, exiting} and the bytes read back ("repeat": N adds the
// median_ms of N more launches).
std::pair<json, std::vector<std::byte>> run(const json& header, const std::vector<std::byte>& fill) {
  const json& L = header.at("launch");
  if (L.at("kernel") != "flashinfer_batch_decode" && L.at("kernel") != "flashinfer_batch_prefill")
    return {{{"status", "error"},
             {"detail", "this driver runs flashinfer_batch_decode and flashinfer_batch_prefill, not " +
                            L.at("kernel").dump()}},
            {}};
  device_buffer arena(header.at("arena_bytes").get<std::size_t>());
  check(cudaMemset(arena.p, 0, header.at("arena_bytes").get<std::size_t>()), "cudaMemset");
  std::size_t from = 0;
  for (const auto& r : header.at("fill")) {
    const auto off = r.at(0).get<std::size_t>(), n = r.at(1).get<std::size_t>();
    if (from + n > fill.size())
      return {{{"status", "error"}, {"detail", "fill bytes shorter than the regions"}}, {}};
    check(cudaMemcpy(arena.bytes() + off, fill.data() + from, n, cudaMemcpyHostToDevice), "fill");
    from += n;
  }
  const side_tables t = side_of(L);
  device_buffer side(t.ints.size() * 4);
  check(cudaMemcpy(side.p, t.ints.data(), t.ints.size() * 4, cudaMemcpyHostToDevice), "side tables");
  const auto launch = launch_of(L, arena.bytes(), static_cast<int32_t*>(side.p), t);
  const event_pair ev;
  check(cudaEventRecord(ev.begin), "event");
  const std::string refused = launch();
  cudaEventRecord(ev.end);
  const cudaError_t done = cudaDeviceSynchronize();
  if (done != cudaSuccess)  // the kernel faulted: the context is lost
    return {{{"status", "fault"},
             {"detail", std::string(cudaGetErrorName(done)) + ": " + cudaGetErrorString(done)},
             {"exiting", true}},
            {}};
  if (!refused.empty()) return {{{"status", "raised"}, {"detail", refused}}, {}};
  const float ms = ev.ms();
  std::vector<std::byte> back;
  for (const auto& r : header.at("readback")) {
    const auto off = r.at(0).get<std::size_t>(), n = r.at(1).get<std::size_t>();
    back.resize(back.size() + n);
    check(cudaMemcpy(back.data() + back.size() - n, arena.bytes() + off, n, cudaMemcpyDeviceToHost),
          "readback");
  }
  json reply = {{"status", "ok"}, {"kernel_ms", ms}};
  if (const int n = header.value("repeat", 0); n > 0) reply["median_ms"] = median_ms(launch, n);
  return {reply, std::move(back)};
}

std::vector<std::byte> bytes_of(const std::string& s) {
  std::vector<std::byte> b(s.size());
  std::memcpy(b.data(), s.data(), s.size());
  return b;
}

json hello() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0)
    return {{"device_count", 0}, {"error", "flashinfer driver: no CUDA device"}};
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  return {{"device_count", count},
          {"device_name", prop.name},
          {"kernel", "flashinfer_batch_decode,flashinfer_batch_prefill"},
          {"commit", built_from + sizeof("flashinfer@") - 1}};
}

}  // namespace

int main() {
  using namespace headroom;
  const int fd = engine::driver_channel_fd;
  const json h = hello();
  if (!gpu::write_message(fd, bytes_of(h.dump())) || h.at("device_count") == 0) return 0;
  for (;;) {
    std::vector<std::byte> head, fill;
    if (gpu::read_message(fd, head) != gpu::read_status::ok ||
        gpu::read_message(fd, fill) != gpu::read_status::ok)
      return 0;
    json reply;
    std::vector<std::byte> back;
    try {
      std::tie(reply, back) =
          run(json::parse(std::string(reinterpret_cast<const char*>(head.data()), head.size())), fill);
    } catch (const cuda_error& e) {  // a runtime call failed: the context may be gone
      reply = {{"status", "fault"}, {"detail", e.what()}, {"exiting", true}};
    } catch (const std::exception& e) {
      reply = {{"status", "error"}, {"detail", e.what()}};
    }
    if (!gpu::write_message(fd, bytes_of(reply.dump())) || !gpu::write_message(fd, back)) return 0;
    if (reply.value("exiting", false)) return 3;
  }
}
