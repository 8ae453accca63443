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

// An input whose values the worker makes on the device (kernels/input_values.hpp) instead of
// receiving its bytes: one value stream (q, k_cache, v_cache), or the packed cache's two (K and V
// rows interleaved, `row` = head_size), of element type gen_type.
enum class value_gen : int32_t { none, stream, packed_kv };

struct wire_buffer {
  std::string name;
  int64_t elem_bytes = 0;
  int64_t extent = 0;    // elements
  bool scratch = false;  // poisoned (0xFF) on the device before each run
  // Input buffers: extent * elem_bytes bytes (none when generated). Scratch: the bytes of the first
  // elements the host wrote (a planner's work list filled in part; usually none), over the poison.
  std::vector<std::byte> data;
  value_gen gen = value_gen::none;
  elem_type gen_type = elem_type::f32;
  uint64_t key = 0, key_v = 0;  // stream keys (packed: K's and V's)
  int64_t row = 0;              // packed: head_size
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
  // The engine target (targets/engine/): what the engine's launcher takes beyond the params, as
  // JSON (vLLM's seq_threshold_3D and segment count: the plan's). Empty for headroom's own bodies.
  std::string engine;
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

// A campaign batch (the GPU campaign path, docs/campaigns.md): many cases in one round trip, each
// run once in the guarded mode on inputs made on the device, all in one arena; after the kernels,
// one guard check over every band and, per attention case, the fp32 reference computed on the
// device and compared with the output there (only the verdicts come back, never the buffers).
struct reference_job {
  int32_t q = -1, kv = -1, block_table = -1, seq_lens = -1, query_start = -1, output = -1;
  int64_t v_offset = 0;  // elements from the K buffer's start to V's (packed: head_size)
  int32_t v = -1;        // separate layout: V's own buffer (then v_offset is 0)
  int64_t heads = 0, kv_heads = 0, head_size = 0, block_size = 0, window = 0, width = 0;
  int64_t seqs = 0, tokens = 0, stride = 0;  // requests, output rows covered, elements between kv rows
  double atol = 0, rtol = 0;
};

struct batch_case {
  gpu_request rq;  // modes and guards ignored
  bool compare = false;
  reference_job ref;
};

struct gpu_batch {
  std::vector<batch_case> cases;
  guard_options guards;
};

struct case_verdict {
  bool faulted = false;  // a launch of this case failed on the host side (its shape, its params)
  std::string fault;
  std::vector<guard_report> guards;  // launch: always 0 (one check after all of them)
  bool compared = false;
  int64_t bad = 0;        // output elements outside tolerance (NaN included)
  int64_t unwritten = 0;  // output elements still holding the poison
  double max_abs_err = 0;
  int64_t first_bad = -1;  // element index of the first bad one (when bad > 0)
};

struct gpu_batch_response {
  std::vector<case_verdict> cases;  // empty when the batch faulted
  bool faulted = false;             // a launch faulted: which case is unknown (replay them one by one)
  std::string fault;
  std::string error;  // a host-side failure in the worker (bad package, ...)
  bool worker_exiting = false;
  double setup_ms = 0, kernels_ms = 0, check_ms = 0, total_ms = 0;  // wall clock in the worker
  // Device time of each phase (events on the batch's first stream): filling the arena, the cases'
  // launches (from the fill's end to the last case's end), the output check, the guard check.
  double fill_gpu_ms = 0, cases_gpu_ms = 0, verdict_gpu_ms = 0, guard_gpu_ms = 0;
};

// The worker's first message: how many devices it sees and why none, if none.
struct worker_hello {
  int32_t device_count = 0;
  std::string device_name;
  std::string error;
  std::string engines;  // the engine worker: the engine kernels it runs, comma-separated
};

// Requests begin with their kind.
enum class message_kind : int32_t { request = 1, batch = 2 };
message_kind kind_of(const std::vector<std::byte>& m);

std::vector<std::byte> encode(const gpu_request& r);
std::vector<std::byte> encode(const gpu_batch& b);
std::vector<std::byte> encode(const gpu_batch_response& r);
std::vector<std::byte> encode(const gpu_response& r);
std::vector<std::byte> encode(const worker_hello& h);
// Throw std::runtime_error on a truncated or malformed message.
gpu_request decode_request(const std::vector<std::byte>& m);
gpu_response decode_response(const std::vector<std::byte>& m);
gpu_batch decode_batch(const std::vector<std::byte>& m);
gpu_batch_response decode_batch_response(const std::vector<std::byte>& m);
worker_hello decode_hello(const std::vector<std::byte>& m);

// Length-prefixed messages on a file descriptor, retrying on EINTR. write_message returns false
// when the peer is gone. read_message waits at most timeout_ms for the message to start (< 0:
// forever); a length above max_message_bytes reads as eof (a corrupt length must not allocate
// terabytes), so no request, reply or engine-driver frame may be larger.
inline constexpr uint64_t max_message_bytes = uint64_t{8} << 30;
enum class read_status { ok, eof, timeout };
bool write_message(int fd, const std::vector<std::byte>& m);
read_status read_message(int fd, std::vector<std::byte>& m, int timeout_ms = -1);

}  // namespace headroom::gpu
