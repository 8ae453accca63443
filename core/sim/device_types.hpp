// Plain types shared by kernel bodies, the simulator and the GPU launcher: launch shapes,
// thread coordinates, buffer handles and small vectors. All are trivially copyable PODs that nvcc
// can pass by value into a __global__ function; nothing here allocates or throws.
#pragma once

#include <cstdint>

#include "core/sim/host_device.hpp"

namespace headroom {

// Grid or block shape (CUDA dim3, signed so index arithmetic stays in int64_t).
struct launch_dim {
  int64_t x = 1, y = 1, z = 1;
  HEADROOM_HOST_DEVICE int64_t count() const { return x * y * z; }
};

// One thread of a block: coordinates plus the linear id x + X*(y + Y*z) (CUDA's warp order).
struct thread_idx {
  int x = 0, y = 0, z = 0;
  int linear = 0;
};

// A named global buffer as kernel params carry it: base pointer, extent in elements, and the id the
// executor gave it (the simulator attributes accesses by id; a device-checked build logs it).
// Bodies never dereference `data` themselves: they ask the context for a view.
// A view may start inside its buffer (the packed KV cache's V, docs/sim.md): `offset` elements
// from the buffer's start to `data`, and then offset + extent is the buffer's extent, so bounds
// and statistics stay those of the whole allocation (index i of the view is element offset + i).
template <class T>
struct buffer_ref {
  T* data = nullptr;
  int64_t extent = 0;
  int32_t id = -1;
  int64_t offset = 0;
};

// The view of r that starts `first` elements in and runs to the buffer's end.
template <class T>
HEADROOM_HOST_DEVICE buffer_ref<T> view_from(buffer_ref<T> r, int64_t first) {
  return {r.data + first, r.extent - first, r.id, r.offset + first};
}

// N consecutive elements moved by one access (a vectorised load or store of one lane's chunk).
template <class T, int N>
struct vec {
  static_assert(N >= 1, "vec needs at least one element");
  T v[N];
  HEADROOM_HOST_DEVICE T& operator[](int i) { return v[i]; }
  HEADROOM_HOST_DEVICE const T& operator[](int i) const { return v[i]; }
};

template <int N>
using fvec = vec<float, N>;

// a * b + c in two's-complement 32-bit arithmetic (what ctx.offset32 returns), and whether that
// differs from the exact value (operands bounded so that the exact one fits 64 bits).
HEADROOM_HOST_DEVICE inline int64_t wrap32_mad(int64_t a, int64_t b, int64_t c) {
  const uint32_t r = static_cast<uint32_t>(a) * static_cast<uint32_t>(b) + static_cast<uint32_t>(c);
  return static_cast<int32_t>(r);
}
HEADROOM_HOST_DEVICE inline bool wraps32_mad(int64_t a, int64_t b, int64_t c) {
  const int64_t p = a * b, s = p + c, lo = -(int64_t{1} << 31), hi = (int64_t{1} << 31) - 1;
  return p < lo || p > hi || s < lo || s > hi;
}

// One lane's operands of a warp's tensor-core product D = A * B + C (ctx.mma_m16n8k16; layouts in
// core/sim/warp_ops.hpp): A and B registers (two 16-bit elements each) by value, C (4 floats)
// accumulated in place.
struct mma_operands {
  uint32_t a[4];
  uint32_t b[2];
  float* c;
};

// One lane's part of a warp's ldmatrix (ctx.ldmatrix): the element offset, in a shared view,
// of the 16-byte row the lane names, and where its registers go.
struct matrix_row {
  int64_t offset;
  uint32_t* regs;
};

// One lane's part of a warpgroup's product D = A * B + D (ctx.wgmma: wgmma.mma_async m64nNk16):
// A registers by value (the warp's 16 rows of the
// 64, mma_operands' A layout), D (N / 2 floats, mma's C layout for each 8 columns) accumulated in place, and
// b, the element offset in the shared view where B's first row starts (the same in every lane of the
// warpgroup).
struct wgmma_operands {
  uint32_t a[4];
  float* d;
  int64_t b;
};

// B of ctx.wgmma sits in rows of 64 16-bit elements (128 bytes) whose 16-byte chunks are swizzled
// in 1024-byte atoms (wgmma's 128-byte swizzle: chunk c of row r at chunk c ^ (r % 8)); u is the
// unswizzled element offset from the view's start, which the GPU aligns to 1024 bytes.
HEADROOM_HOST_DEVICE inline int64_t sw128_at(int64_t u) { return u ^ ((u >> 3) & 0x38); }
// Element (k, n) of B (16 x N) starting at unswizzled offset b: K-major, row n holds k (16 of the
// row's 64); MN-major, row k holds n in blocks of 64 columns, lbo elements apart.
template <bool MN>
HEADROOM_HOST_DEVICE inline int64_t wgmma_b_at(int64_t b, int64_t lbo, int k, int n) {
  return MN ? b + (n / 64) * lbo + 64 * k + n % 64 : b + 64 * n + k;
}

}  // namespace headroom
