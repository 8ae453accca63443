// A worker without a GPU (the executable headroom_gpu_simworker), for testing the lane's host side
// on any machine (label cpu): it answers the real worker protocol (worker.hpp) by running each
// request on the simulator instead of a device, so process isolation, the wire format, parameter patching and
// the executor's observations are exercised end to end. Checked runs report touched extents and out-of-bounds
// accesses as the device-checked build does; guard bands do not exist here (never corrupted).
#include <cstring>
#include <stdexcept>

#include "kernels/families.hpp"
#include "targets/gpu/launch/planted.hpp"
#include "targets/gpu/worker/serve.hpp"
#include "targets/gpu/worker/worker.hpp"
#include "targets/gpu/worker/worker_process.hpp"
#include "targets/sim/sim_launch.hpp"

namespace headroom::gpu {
namespace {

template <class P>
P patched(const gpu_request& rq, sim::memory& m) {
  if (rq.params.size() != sizeof(P)) throw std::invalid_argument("sim worker: params size");
  P p;
  std::memcpy(static_cast<void*>(&p), rq.params.data(), sizeof(P));
  patch_refs(p, [&](const auto& r) -> void* { return m.at(r.id).data; });
  return p;
}

template <class T>
void launch_typed(const gpu_request& rq, sim::memory& m) {
  sim_launch launch{m};
  switch (rq.fam) {
    case family::triton:
      return launch_family(launch, patched<triton_params<T>>(rq, m));
    case family::fi_decode:
      return launch_family(launch, patched<fi_decode_params<T>>(rq, m));
    case family::fi_prefill:
      return launch_family(launch, patched<fi_prefill_params<T>>(rq, m));
    case family::fa3_scheduler:
      return launch_family(launch, patched<fa3_scheduler_params>(rq, m));
    case family::request_meta:
      return launch_family(launch, patched<request_meta_params>(rq, m));
    case family::mqa_metadata:
      return launch_family(launch, patched<mqa_metadata_params>(rq, m));
    case family::offset_probe:
      return launch_family(launch, patched<offset_probe_params>(rq, m));
    case family::planted:
      return launch.run<planted_store>(patched<planted_params>(rq, m));
  }
}

// A buffer of the request's element size (its bytes are all the simulator needs).
std::byte* alloc_like(sim::memory& m, const wire_buffer& b) {
  const sim::fill f = b.scratch ? sim::fill::scratch : sim::fill::data;
  switch (b.elem_bytes) {
    case 8:
      return reinterpret_cast<std::byte*>(m.alloc<int64_t>(b.name, b.extent, f).data);
    case 4:
      return reinterpret_cast<std::byte*>(m.alloc<float>(b.name, b.extent, f).data);
    case 1:
      return reinterpret_cast<std::byte*>(m.alloc<uint8_t>(b.name, b.extent, f).data);
    default:
      return reinterpret_cast<std::byte*>(m.alloc<uint16_t>(b.name, b.extent, f).data);
  }
}

run_result run_once(const gpu_request& rq, run_mode mode) {
  run_result r;
  r.mode = mode;
  sim::memory m;
  for (const auto& b : rq.buffers) {
    std::byte* d = alloc_like(m, b);
    if (b.scratch)  // poisoned, as the device's scratch is
      std::memset(d, 0xFF, static_cast<std::size_t>(b.elem_bytes * b.extent));
    if (!b.data.empty()) std::memcpy(d, b.data.data(), b.data.size());
    if (b.scratch) {  // the host-written prefix counts as written
      sim::sim_buffer& sb = m.at(static_cast<int32_t>(m.size() - 1));
      sb.host_prefix = static_cast<int64_t>(b.data.size()) / b.elem_bytes;
      std::memset(sb.written, 1, static_cast<std::size_t>(sb.host_prefix));
    }
  }
  switch (rq.type) {
    case elem_type::f32:
      launch_typed<float>(rq, m);
      break;
    case elem_type::bf16:
      launch_typed<bf16>(rq, m);
      break;
    case elem_type::fp16:
      launch_typed<fp16>(rq, m);
      break;
  }
  if (mode == run_mode::checked) {
    for (std::size_t i = 0; i < m.size(); ++i)
      r.touched.push_back(m[i].stats.loads + m[i].stats.stores > 0 ? m[i].stats.touched : -1);
    r.oob_count = m.log.oob_count;
    r.index_overflows = m.log.index_overflows;
    for (std::size_t i = 0; i < m.size(); ++i)  // the device counts these only: see device_log.hpp
      if (m[i].host_prefix > 0) r.uninitialized_reads += m[i].stats.uninitialized;
    for (const auto& a : m.log.oob) {
      device_oob_record d;
      d.index = a.index, d.extent = a.extent, d.write = a.write;
      for (std::size_t i = 0; i < m.size(); ++i)
        if (m[i].name == a.buffer) d.buffer_id = static_cast<int32_t>(i);
      if (a.buffer.rfind("shared:", 0) == 0) {  // a shared array travels by name, as the device logs it
        d.buffer_id = shared_buffer_id;
        a.buffer.copy(d.name, sizeof d.name - 1, 7);
      }
      for (int k = 0; k < 3; ++k)
        d.block[k] = static_cast<int32_t>(a.block[k]), d.thread[k] = static_cast<int32_t>(a.thread[k]);
      r.oob.push_back(d);
    }
  }
  const auto bytes_of = [&](int32_t id) {
    std::vector<std::byte> v;
    if (id < 0 || static_cast<std::size_t>(id) >= m.size()) return v;
    const auto& b = m[static_cast<std::size_t>(id)];
    v.assign(b.data, b.data + b.elem_bytes * b.extent);
    return v;
  };
  r.output = bytes_of(rq.download);
  r.states = bytes_of(rq.download_states);
  return r;
}

}  // namespace

worker_hello probe_devices() noexcept {
  worker_hello h;
  h.device_count = 1;
  h.device_name = "simulated device (tests/gpu/sim_worker.cpp)";
  return h;
}

gpu_response execute(const gpu_request& rq) {
  gpu_response resp;
  for (run_mode m : rq.modes) resp.runs.push_back(run_once(rq, m));
  return resp;
}

int worker_main(int in_fd, int out_fd, int) {
  if (!write_message(out_fd, encode(probe_devices()))) return 0;
  return serve_requests(in_fd, out_fd, execute);
}

}  // namespace headroom::gpu

int main() {
  return headroom::gpu::worker_main(headroom::gpu::worker_channel_fd, headroom::gpu::worker_channel_fd, 0);
}
