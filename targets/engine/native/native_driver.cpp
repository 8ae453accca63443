// native_driver.hpp: the driver's frame loop, its arena and its timing.
#include "targets/engine/native/native_driver.hpp"

#include <algorithm>
#include <cstring>
#include <tuple>
#include <utility>

#include "targets/engine/driver_process.hpp"
#include "targets/gpu/worker/wire.hpp"

namespace headroom::engine::native {

using nlohmann::json;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw cuda_error(std::string(what) + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
}

device_buffer::device_buffer(std::size_t bytes) {
  check(cudaMalloc(&p, bytes < 16 ? 16 : bytes), "cudaMalloc");
}
device_buffer::~device_buffer() { cudaFree(p); }

namespace {

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
    spin_device(spin_cycles);
    check(cudaEventRecord(ev.begin), "event");
    if (const std::string e = launch(); !e.empty()) throw cuda_error(e);
    check(cudaEventRecord(ev.end), "event");
    check(cudaEventSynchronize(ev.end), "timed launch");
    t = ev.ms();
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

json refusal(const std::string& detail) { return {{"status", "error"}, {"detail", detail}}; }

// One run: the arena written, the launch made, the bands and downloads read back.
std::pair<json, std::vector<std::byte>> run(const engine_driver& d, const json& header,
                                            const std::vector<std::byte>& fill) {
  const json& L = header.at("launch");
  const std::string kernel = L.at("kernel").get<std::string>();
  if (std::find(d.kernels.begin(), d.kernels.end(), kernel) == d.kernels.end())
    return {refusal("the " + d.engine + " driver does not run " + kernel), {}};
  const auto arena_bytes = header.at("arena_bytes").get<std::size_t>();
  device_buffer arena(arena_bytes);
  check(cudaMemset(arena.p, 0, arena_bytes), "cudaMemset");
  std::size_t from = 0;
  for (const auto& r : header.at("fill")) {
    const auto off = r.at(0).get<std::size_t>(), n = r.at(1).get<std::size_t>();
    if (from + n > fill.size()) return {refusal("fill bytes shorter than the regions"), {}};
    check(cudaMemcpy(arena.bytes() + off, fill.data() + from, n, cudaMemcpyHostToDevice), "fill");
    from += n;
  }
  const prepared_launch launch = d.prepare(L, arena.bytes());
  const event_pair ev;
  check(cudaEventRecord(ev.begin), "event");
  const std::string refused = launch.call();
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
  json reply = launch.report;
  reply["status"] = "ok";
  reply["kernel_ms"] = ms;
  if (const int n = header.value("repeat", 0); n > 0) reply["median_ms"] = median_ms(launch.call, n);
  return {reply, std::move(back)};
}

std::vector<std::byte> bytes_of(const std::string& s) {
  std::vector<std::byte> b(s.size());
  std::memcpy(b.data(), s.data(), s.size());
  return b;
}

json hello(const engine_driver& d) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0)
    return {{"device_count", 0}, {"error", d.engine + " driver: no CUDA device"}};
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  std::string kernels;
  for (const auto& k : d.kernels) kernels += (kernels.empty() ? "" : ",") + k;
  return {{"device_count", count}, {"device_name", prop.name}, {"kernel", kernels}, {"commit", d.commit}};
}

}  // namespace

int serve(const engine_driver& d) {
  const int fd = driver_channel_fd;
  const json h = hello(d);
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
          run(d, json::parse(std::string(reinterpret_cast<const char*>(head.data()), head.size())), fill);
    } catch (const cuda_error& e) {  // a runtime call failed: the context may be gone
      reply = {{"status", "fault"}, {"detail", e.what()}, {"exiting", true}};
    } catch (const std::exception& e) {
      reply = refusal(e.what());
    }
    if (!gpu::write_message(fd, bytes_of(reply.dump())) || !gpu::write_message(fd, back)) return 0;
    if (reply.value("exiting", false)) return 3;
  }
}

}  // namespace headroom::engine::native
