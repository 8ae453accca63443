// A worker without a GPU (the executable headroom_gpu_simworker), for testing the lane's host side
// on any machine (label cpu): it answers the real worker protocol (worker.hpp) by running each
// request on the simulator instead of a device, so process isolation, the wire format, parameter patching and
// the executor's observations are exercised end to end. Checked runs report touched extents and out-of-bounds
// accesses as the device-checked build does; guard bands do not exist here (never corrupted).
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/families.hpp"
#include "kernels/input_values.hpp"
#include "kernels/reference_row.hpp"
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

// The request's family on the simulator (run_checked: the bodies are compiled once, in headroom_sim).
template <class T>
void launch_typed(const gpu_request& rq, sim::memory& m) {
  switch (rq.fam) {
    case family::triton:
      return run_checked<T>(m, patched<triton_params<T>>(rq, m));
    case family::fi_decode:
      return run_checked<T>(m, patched<fi_decode_params<T>>(rq, m));
    case family::fi_prefill:
      return run_checked<T>(m, patched<fi_prefill_params<T>>(rq, m));
    case family::fa3_scheduler:
      return run_checked(m, meta_params{patched<fa3_scheduler_params>(rq, m)});
    case family::request_meta:
      return run_checked(m, meta_params{patched<request_meta_params>(rq, m)});
    case family::mqa_metadata:
      return run_checked(m, meta_params{patched<mqa_metadata_params>(rq, m)});
    case family::offset_probe:
      return run_checked(m, meta_params{patched<offset_probe_params>(rq, m)});
    case family::planted: {
      sim_launch launch{m};
      return launch.run<planted_store>(patched<planted_params>(rq, m));
    }
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

// A generated input's values (wire_buffer::gen), made here as the device makes them.
template <class T>
void generate(const wire_buffer& b, std::byte* d) {
  T* out = reinterpret_cast<T*>(d);
  for (int64_t e = 0; e < b.extent; ++e)
    out[e] = b.gen == value_gen::packed_kv ? packed_kv_value<T>(b.key, b.key_v, b.row, e)
                                           : input_value<T>(b.key, e);
}

template <class F>
void with_type(elem_type t, F f) {
  switch (t) {
    case elem_type::f32:
      return f.template operator()<float>();
    case elem_type::bf16:
      return f.template operator()<bf16>();
    case elem_type::fp16:
      return f.template operator()<fp16>();
  }
}

// The request's buffers in m (inputs sent or generated, scratch poisoned but for its prefix), then
// its launches.
void run_in(const gpu_request& rq, sim::memory& m) {
  for (const auto& b : rq.buffers) {
    std::byte* d = alloc_like(m, b);
    if (b.scratch)  // poisoned, as the device's scratch is
      std::memset(d, 0xFF, static_cast<std::size_t>(b.elem_bytes * b.extent));
    if (b.gen != value_gen::none) with_type(b.gen_type, [&]<class T>() { generate<T>(b, d); });
    if (!b.data.empty()) std::memcpy(d, b.data.data(), b.data.size());
    if (b.scratch) {  // the host-written prefix counts as written
      sim::sim_buffer& sb = m.at(static_cast<int32_t>(m.size() - 1));
      sb.host_prefix = static_cast<int64_t>(b.data.size()) / b.elem_bytes;
      std::memset(sb.written, 1, static_cast<std::size_t>(sb.host_prefix));
    }
  }
  with_type(rq.type, [&]<class T>() { launch_typed<T>(rq, m); });
}

// The device's verdict of a campaign case (batch_verdict.cuh), from the same reference rows.
template <class T>
void verdict_of(const reference_job& j, sim::memory& m, case_verdict& v) {
  auto at = [&](int32_t id) { return reinterpret_cast<const T*>(m.at(id).data); };
  const T* k = at(j.kv);
  const reference_view<T> view{at(j.q),
                               k,
                               (j.v >= 0 ? at(j.v) : k) + j.v_offset,
                               reinterpret_cast<const int32_t*>(m.at(j.block_table).data),
                               reinterpret_cast<const int32_t*>(m.at(j.seq_lens).data),
                               reinterpret_cast<const int32_t*>(m.at(j.query_start).data),
                               j.heads,
                               j.kv_heads,
                               j.head_size,
                               j.block_size,
                               j.window,
                               j.width,
                               j.stride};
  const T* out = at(j.output);
  std::vector<float> ref(static_cast<std::size_t>(j.head_size));
  for (int64_t s = 0; s < j.seqs; ++s)
    for (int64_t t = view.query_start[s]; t < view.query_start[s + 1] && t < j.tokens; ++t)
      for (int64_t h = 0; h < j.heads; ++h) {
        reference_row(view, s, t - view.query_start[s], h, ref.data());
        for (int64_t d = 0; d < j.head_size; ++d) {
          const int64_t e = (t * j.heads + h) * j.head_size + d;
          uint16_t bits16 = 0;
          uint32_t bits32 = 0;
          std::memcpy(sizeof(T) == 4 ? static_cast<void*>(&bits32) : static_cast<void*>(&bits16), out + e,
                      sizeof(T));
          v.unwritten += (sizeof(T) == 4 ? bits32 == 0xFFFFFFFFu : bits16 == 0xFFFFu) ? 1 : 0;
          const float x = to_float(out[e]);
          if (std::isfinite(x))
            v.max_abs_err = std::max(v.max_abs_err, static_cast<double>(std::fabs(x - ref[d])));
          if (!within_tolerance(x, ref[d], j.atol, j.rtol) && v.bad++ == 0) v.first_bad = e;
        }
      }
}

run_result run_once(const gpu_request& rq, run_mode mode) {
  run_result r;
  r.mode = mode;
  sim::memory m;
  run_in(rq, m);
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

// Cases one after the other, the output checked as the device checks it. There are no guard bands
// here: a write out of bounds (what a band would catch) is reported as a corrupted band of its
// buffer, and an access more than 2^32 elements past a buffer (an illegal address on a device)
// kills the worker, as a device fault kills the CUDA one.
gpu_batch_response execute_batch(const gpu_batch& b) {
  gpu_batch_response resp;
  for (const auto& c : b.cases) {
    case_verdict& v = resp.cases.emplace_back();
    sim::memory m;
    try {
      run_in(c.rq, m);
    } catch (const std::invalid_argument& e) {
      v.faulted = true;
      v.fault = e.what();
      continue;
    }
    for (const auto& a : m.log.oob)  // far past any allocation: a device faults, and so do we
      if (a.index - a.extent > (int64_t{1} << 32)) std::abort();
    for (const auto& a : m.log.oob)
      for (std::size_t i = 0; i < m.size(); ++i)
        if (a.write && m[i].name == a.buffer &&
            std::none_of(v.guards.begin(), v.guards.end(),
                         [&](const guard_report& g) { return g.buffer == static_cast<int32_t>(i); }))
          v.guards.push_back(
              {static_cast<int32_t>(i), 0, 1, a.index * m[i].elem_bytes, a.index * m[i].elem_bytes});
    v.compared = c.compare;
    if (c.compare) with_type(c.rq.type, [&]<class T>() { verdict_of<T>(c.ref, m, v); });
  }
  return resp;
}

int worker_main(int in_fd, int out_fd, int) {
  if (!write_message(out_fd, encode(probe_devices()))) return 0;
  return serve_requests(in_fd, out_fd,
                        {execute,
                         [](gpu_batch&& b) -> std::shared_ptr<void> {
                           return std::make_shared<gpu_batch_response>(execute_batch(b));
                         },
                         [](void* r) { return std::move(*static_cast<gpu_batch_response*>(r)); }});
}

}  // namespace headroom::gpu

int main() {
  return headroom::gpu::worker_main(headroom::gpu::worker_channel_fd, headroom::gpu::worker_channel_fd, 0);
}
