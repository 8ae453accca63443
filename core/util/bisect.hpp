// Bisection over a non-decreasing sequence given by an accessor, on the host and on the device: the
// request a token belongs to (query_start), the job or operation a flat work index falls in.
#pragma once

#include <cstdint>

#include "core/sim/host_device.hpp"

namespace headroom {

// The last index i in [0, n) with at(i) <= x, for at() non-decreasing and at(0) <= x (0 when n <= 1).
template <class I, class At>
HEADROOM_HOST_DEVICE I last_at_or_below(I n, int64_t x, const At& at) {
  I lo = 0, hi = n;
  while (hi - lo > 1) {
    const I mid = lo + (hi - lo) / 2;
    (at(mid) <= x ? lo : hi) = mid;
  }
  return lo;
}

}  // namespace headroom
