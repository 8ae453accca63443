// The device-checked build's log: plain structs written by the checked views on the GPU (atomics)
// and read back by the worker. Per buffer id: the largest element index touched + 1 (out-of-bounds
// accesses included, as the simulator counts it); the first out-of-bounds accesses with block and
// thread attribution (thread -1,-1,-1: block-uniform code, as in the simulator); the total count;
// and the reads of a partly host-written buffer (a planner's work list) past what the host wrote.
#pragma once

#include <cstdint>

namespace headroom::gpu {

// Buffer ids a checked run can attribute (a case uses 10 to 12: inputs, output, plan buffers).
inline constexpr int max_log_buffers = 32;
// Out-of-bounds records kept (the simulator's sim_log::max_records); the count is always complete.
inline constexpr int max_log_records = 16;
// Shared-memory arrays are logged with this id and their name (the simulator's "shared:<name>").
inline constexpr int32_t shared_buffer_id = -2;

struct device_oob_record {
  int64_t index = 0;
  int64_t extent = 0;
  int32_t buffer_id = -1;
  int32_t write = 0;
  int32_t block[3] = {0, 0, 0};
  int32_t thread[3] = {0, 0, 0};
  char name[16] = {};  // shared arrays only (global buffers are named by id on the host)
};

struct device_log {
  unsigned long long oob_count = 0;            // out-of-bounds element accesses, all of them
  unsigned long long used_mask = 0;            // bit i: buffer id i was accessed
  unsigned long long index_overflows = 0;      // ctx.offset32 evaluations that wrapped 32 bits
  unsigned long long uninitialized_reads = 0;  // reads past a buffer's host-written prefix
  // Per buffer id: elements [0, init_end) hold data; a read in [init_end, extent) is uninitialized
  // (a work list the planner filled only in part; its tail is poison). The host sets it per run.
  long long init_end[max_log_buffers] = {};
  long long touched[max_log_buffers] = {};  // largest element index + 1 per buffer id
  device_oob_record rec[max_log_records];   // the first max_log_records, in arrival order
};

static_assert(max_log_buffers <= 64, "used_mask holds one bit per buffer id");

}  // namespace headroom::gpu
