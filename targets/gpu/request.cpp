// See request.hpp.
#include "targets/gpu/request.hpp"

#include <algorithm>

namespace headroom::gpu {

void add_buffers(const sim::memory& m, gpu_request& rq, const std::vector<int32_t>& no_bytes) {
  for (std::size_t i = 0; i < m.size(); ++i) {
    const sim::sim_buffer& b = m[i];
    wire_buffer w{b.name, b.elem_bytes, b.extent, b.track_init, {}};
    const bool made_there =
        std::find(no_bytes.begin(), no_bytes.end(), static_cast<int32_t>(i)) != no_bytes.end();
    // a scratch buffer: its host-written prefix
    const int64_t sent = made_there ? 0 : w.scratch ? b.host_prefix : b.extent;
    w.data.assign(b.data, b.data + b.elem_bytes * sent);
    if (b.name == output_buffer_name) rq.download = static_cast<int32_t>(i);
    if (b.name == "tmp_s" && rq.fam == family::fi_prefill)  // which partial states a run wrote
      rq.download_states = static_cast<int32_t>(i);
    rq.buffers.push_back(std::move(w));
  }
}

}  // namespace headroom::gpu
