// One launch of FlashInfer's batch decode (BatchDecodeWithPagedKVCacheDispatched, which also runs
// VariableLengthMergeStates when tmp_v is given) on device pointers the driver resolved in its arena.
// Plain C++: fi_driver_main.cpp fills it; the .cu units instantiate FlashInfer's templates.
#pragma once

#include <cstdint>
#include <string>

namespace headroom::engine::fi {

enum class elem { bf16, fp16 };

struct decode_args {
  elem type = elem::bf16;
  uint32_t head_dim = 0, num_qo_heads = 0, num_kv_heads = 0, page_size = 0, batch_size = 0, padded = 0;
  int32_t window_left = -1;
  float sm_scale = 1.0f;
  int32_t q_stride_n = 0, q_stride_h = 0;
  int64_t kv_strides[3] = {0, 0, 0};  // page, token, head (elements)
  void *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr;
  void* tmp_v = nullptr;  // null: the plan does not split (no partition, no merge)
  float* tmp_s = nullptr;
  int32_t *request_indices = nullptr, *kv_tile_indices = nullptr, *o_indptr = nullptr;
  int32_t* kv_chunk_size = nullptr;  // one int on the device
  bool* block_valid_mask = nullptr;  // padded entries on the device (split only)
  int32_t *indptr = nullptr, *indices = nullptr, *last_page_len = nullptr;
};

// Launches on the default stream. Returns the launch's error text, empty on success; FlashInfer's
// own refusals (an unsupported group) come back as their message.
std::string launch_decode(const decode_args& a);

}  // namespace headroom::engine::fi
