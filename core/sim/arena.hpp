// A bump allocator for per-thread register state (ctx.registers<T>()): chunks are kept across
// blocks and the arena is reset at the start of every block, so steady state allocates nothing.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

namespace headroom::sim {

class register_arena {
 public:
  // 1024 threads x 64 bytes of state per chunk; larger requests get a chunk of their own size.
  static constexpr std::size_t min_chunk = 64 * 1024;
  // Chunks come from new[], which aligns to 16 bytes; registers<T>() asserts alignof(T) <= 16.
  static constexpr std::size_t alignment = 16;

  void reset() {
    chunk_ = 0;
    used_ = 0;
  }

  void* alloc(std::size_t bytes) {
    while (chunk_ < chunks_.size()) {
      const std::size_t at = (used_ + alignment - 1) / alignment * alignment;
      if (at + bytes <= sizes_[chunk_]) {
        used_ = at + bytes;
        return chunks_[chunk_].get() + at;
      }
      ++chunk_;
      used_ = 0;
    }
    const std::size_t size = std::max(min_chunk, bytes);
    chunks_.push_back(std::unique_ptr<std::byte[]>(new std::byte[size]));  // uninitialized
    sizes_.push_back(size);
    chunk_ = chunks_.size() - 1;
    used_ = bytes;
    return chunks_.back().get();
  }

 private:
  std::vector<std::unique_ptr<std::byte[]>> chunks_;
  std::vector<std::size_t> sizes_;
  std::size_t chunk_ = 0, used_ = 0;
};

}  // namespace headroom::sim
