// What travels between the executor (parent) and the GPU worker (child process): a request is a
// self-contained launch package (every buffer of the case with its bytes or "scratch", the kernel
// family and dtype, the params struct as bytes with buffer ids instead of
// pointers, and the modes to run it in); a response holds one result per mode. Both ends are the
// same executable, so plain structs travel as their bytes. Messages are length-prefixed on a socket
// pair (send with MSG_NOSIGNAL: a dead worker is an error return, never a SIGPIPE).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "targets/gpu/launch/device_log.hpp"

namespace headroom::gpu {

// The kernel family a request launches: one of kernels/families.hpp's (same order), whose launch
// plan and head layout follow from its params, or the tests' planted kernel.
enum class family : int32_t {
  triton,         // kernel_family::triton
  fi_decode,      // kernel_family::fi_decode
  fa3_scheduler,  // kernel_family::fa3_scheduler
  request_meta,   // kernel_family::request_meta
  mqa_metadata,   // kernel_family::mqa_metadata
  offset_probe,   // kernel_family::offset_probe
  fi_prefill,     // kernel_family::fi_prefill
  planted,        // planted_store (tests): stores and loads past a buffer on purpose
};

// Families whose one body does not depend on the element type (dispatched once per context).
constexpr bool is_meta_family(family f) {
  return f == family::fa3_scheduler || f == family::request_meta || f == family::mqa_metadata ||
         f == family::offset_probe;
}

enum class elem_type : int32_t { f32, bf16, fp16 };

// How one run executes: the plain context over exact-size allocations (what production does, and
// what compute-sanitizer watches), the plain context with guard bands, or the checked context.
enum class run_mode : int32_t { plain, guarded, checked };
const char* to_string(run_mode m);

struct wire_buffer {
  std::string name;
  int64_t elem_bytes = 0;
  int64_t extent = 0;    // elements
  bool scratch = false;  // poisoned (0xFF) on the device before each run
  // Input buffers: extent * elem_bytes bytes. Scratch: the bytes of the first elements the host
  // wrote (a planner's work list filled in part; usually none), uploaded over the poison.
  std::vector<std::byte> data;
};

// Guard bands: before each buffer `min_band` bytes; after a writable (scratch) buffer
// max(min_band, after_factor x its size), after an input min_band (inputs are only read). Only the
// first max(min_band, max_band) bytes of an after band hold canaries and are checked; the rest is
// slack. An overrun that starts at the end lands in the canaries whatever the band's size; the
// slack keeps large overruns (a layer with 7x the planned heads) inside the arena and off the next
// buffer, and the cap keeps the check's cost (it reads every canary byte after every launch)
// independent of how large the engine's plan buffers are. After the last buffer the arena ends in
// unchecked slack of tail_factor x its largest writable buffer (at most max_tail bytes), so that a
// runaway overrun (a layer with 32x the planned heads) corrupts canaries and other buffers of the
// arena, as the simulator says it does, instead of faulting past the arena's end.
struct guard_options {
  int64_t min_band = 64 * 1024;
  int64_t after_factor = 4;
  int64_t max_band = 1 << 20;
  int64_t tail_factor = 32;
  int64_t max_tail = int64_t{1} << 30;
};

struct gpu_request {
  family fam = family::triton;
  elem_type type = elem_type::bf16;
  std::vector<std::byte> params;     // triton_params<T> / fi_decode_params<T> / planted params
  std::vector<wire_buffer> buffers;  // index = buffer id in params
  std::vector<run_mode> modes;
  int32_t download = -1;         // buffer id whose bytes come back (the output)
  int32_t download_states = -1;  // and this one's (a split prefill plan's tmp_s: which states were written)
  guard_options guards;
};

struct guard_report {
  int32_t buffer = -1;
  int32_t launch = 0;           // which launch of the run first corrupted it
  int64_t corrupted_bytes = 0;  // canary bytes changed
  int64_t first = 0, last = 0;  // byte offsets from the buffer's start (negative: before it)
};

struct run_result {
  run_mode mode = run_mode::plain;
  bool faulted = false;
  std::string fault;                   // the CUDA error, with file:line and call
  std::vector<int64_t> touched;        // checked: per buffer id, largest index + 1; -1 untouched
  int64_t oob_count = 0;               // checked
  int64_t index_overflows = 0;         // checked: ctx.offset32 evaluations that wrapped
  int64_t uninitialized_reads = 0;     // checked: reads past a scratch buffer's host-written prefix
  std::vector<device_oob_record> oob;  // checked: the first few
  std::vector<guard_report> guards;    // guarded / checked: corrupted bands
  std::vector<std::byte> output;       // the downloaded buffer (empty after a fault)
  std::vector<std::byte> states;       // download_states' bytes (empty after a fault or without one)
  double setup_ms = 0, kernels_ms = 0, guard_ms = 0, total_ms = 0;  // wall clock in the worker
};

struct gpu_response {
  std::vector<run_result> runs;
  std::string error;            // a host-side failure in the worker (bad package, ...)
  bool worker_exiting = false;  // the context is lost: the worker exits after this response
};

// The worker's first message: how many devices it sees and why none, if none.
struct worker_hello {
  int32_t device_count = 0;
  std::string device_name;
  std::string error;
};

std::vector<std::byte> encode(const gpu_request& r);
std::vector<std::byte> encode(const gpu_response& r);
std::vector<std::byte> encode(const worker_hello& h);
// Throw std::runtime_error on a truncated or malformed message.
gpu_request decode_request(const std::vector<std::byte>& m);
gpu_response decode_response(const std::vector<std::byte>& m);
worker_hello decode_hello(const std::vector<std::byte>& m);

// Length-prefixed messages on a file descriptor, retrying on EINTR. write_message returns false
// when the peer is gone. read_message waits at most timeout_ms for the message to start (< 0:
// forever).
enum class read_status { ok, eof, timeout };
bool write_message(int fd, const std::vector<std::byte>& m);
read_status read_message(int fd, std::vector<std::byte>& m, int timeout_ms = -1);

}  // namespace headroom::gpu
