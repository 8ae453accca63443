// Encoding of the worker messages (wire.hpp): little helpers that append and read plain values,
// strings and vectors, and the length-prefixed framing on pipes.
#include "targets/gpu/worker/wire.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "core/util/names.hpp"

namespace headroom::gpu {
namespace {

constexpr name_table<run_mode, 3> mode_names = {
    {{run_mode::plain, "plain"}, {run_mode::guarded, "guarded"}, {run_mode::checked, "checked"}}};

class writer {
 public:
  template <class T>
  void pod(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto* p = reinterpret_cast<const std::byte*>(&v);
    out.insert(out.end(), p, p + sizeof(T));
  }
  void str(const std::string& s) { bytes(reinterpret_cast<const std::byte*>(s.data()), s.size()); }
  void bytes(const std::byte* p, std::size_t n) {
    pod(static_cast<uint64_t>(n));
    out.insert(out.end(), p, p + n);
  }
  template <class T>
  void pods(const std::vector<T>& v) {
    bytes(reinterpret_cast<const std::byte*>(v.data()), v.size() * sizeof(T));
  }
  std::vector<std::byte> out;
};

class reader {
 public:
  explicit reader(const std::vector<std::byte>& m) : m_(m) {}
  template <class T>
  T pod() {
    T v;
    take(&v, sizeof(T));
    return v;
  }
  std::string str() {
    std::string s(static_cast<std::size_t>(length(1)), '\0');
    take(s.data(), s.size());
    return s;
  }
  template <class T>
  std::vector<T> pods() {
    std::vector<T> v(static_cast<std::size_t>(length(sizeof(T)) / sizeof(T)));
    take(v.data(), v.size() * sizeof(T));
    return v;
  }
  void done() const {
    if (at_ != m_.size()) throw std::runtime_error("gpu wire: trailing bytes in a message");
  }

 private:
  uint64_t length(std::size_t unit) {
    const auto n = pod<uint64_t>();
    if (n > m_.size() - at_ || n % unit != 0) throw std::runtime_error("gpu wire: bad length");
    return n;
  }
  void take(void* dst, std::size_t n) {
    if (n > m_.size() - at_) throw std::runtime_error("gpu wire: truncated message");
    if (n) std::memcpy(dst, m_.data() + at_, n);
    at_ += n;
  }
  const std::vector<std::byte>& m_;
  std::size_t at_ = 0;
};

bool write_all(int fd, const void* p, std::size_t n) {
  const auto* c = static_cast<const char*>(p);
  while (n > 0) {
    // send() with MSG_NOSIGNAL: a dead peer is an error return, not a SIGPIPE that kills us.
    ssize_t w = ::send(fd, c, n, MSG_NOSIGNAL);
    if (w < 0 && errno == ENOTSOCK) w = ::write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    c += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

bool read_all(int fd, void* p, std::size_t n) {
  auto* c = static_cast<char*>(p);
  while (n > 0) {
    const ssize_t r = ::read(fd, c, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    c += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

}  // namespace

const char* to_string(run_mode m) { return name_in(mode_names, m); }

namespace {

void put_request(writer& w, const gpu_request& r) {
  w.pod(r.fam), w.pod(r.type), w.pods(r.params);
  w.pod(static_cast<uint64_t>(r.buffers.size()));
  for (const auto& b : r.buffers) {
    w.str(b.name), w.pod(b.elem_bytes), w.pod(b.extent), w.pod(b.scratch), w.pods(b.data);
    w.pod(b.gen), w.pod(b.gen_type), w.pod(b.key), w.pod(b.key_v), w.pod(b.row);
  }
  w.pods(r.modes), w.pod(r.download), w.pod(r.download_states), w.pod(r.guards), w.str(r.engine);
}

gpu_request get_request(reader& rd, std::size_t message_bytes) {
  gpu_request r;
  r.fam = rd.pod<family>(), r.type = rd.pod<elem_type>();
  r.params = rd.pods<std::byte>();
  const auto n = rd.pod<uint64_t>();
  if (n > message_bytes) throw std::runtime_error("gpu wire: bad buffer count");
  for (uint64_t i = 0; i < n; ++i) {
    wire_buffer b;
    b.name = rd.str(), b.elem_bytes = rd.pod<int64_t>(), b.extent = rd.pod<int64_t>();
    b.scratch = rd.pod<bool>(), b.data = rd.pods<std::byte>();
    b.gen = rd.pod<value_gen>(), b.gen_type = rd.pod<elem_type>(), b.key = rd.pod<uint64_t>(),
    b.key_v = rd.pod<uint64_t>();
    b.row = rd.pod<int64_t>();
    r.buffers.push_back(std::move(b));
  }
  r.modes = rd.pods<run_mode>(), r.download = rd.pod<int32_t>(), r.download_states = rd.pod<int32_t>();
  r.guards = rd.pod<guard_options>();
  r.engine = rd.str();
  return r;
}

void expect_kind(reader& rd, message_kind k) {
  if (rd.pod<message_kind>() != k) throw std::runtime_error("gpu wire: unexpected message kind");
}

}  // namespace

message_kind kind_of(const std::vector<std::byte>& m) {
  reader rd(m);
  return rd.pod<message_kind>();
}

std::vector<std::byte> encode(const gpu_request& r) {
  writer w;
  w.pod(message_kind::request);
  put_request(w, r);
  return std::move(w.out);
}

gpu_request decode_request(const std::vector<std::byte>& m) {
  reader rd(m);
  expect_kind(rd, message_kind::request);
  gpu_request r = get_request(rd, m.size());
  rd.done();
  return r;
}

std::vector<std::byte> encode(const gpu_batch& b) {
  writer w;
  w.pod(message_kind::batch);
  w.pod(static_cast<uint64_t>(b.cases.size()));
  for (const auto& c : b.cases) put_request(w, c.rq), w.pod(c.compare), w.pod(c.ref);
  w.pod(b.guards);
  return std::move(w.out);
}

gpu_batch decode_batch(const std::vector<std::byte>& m) {
  reader rd(m);
  expect_kind(rd, message_kind::batch);
  gpu_batch b;
  const auto n = rd.pod<uint64_t>();
  if (n > m.size()) throw std::runtime_error("gpu wire: bad case count");
  for (uint64_t i = 0; i < n; ++i) {
    batch_case c;
    c.rq = get_request(rd, m.size());
    c.compare = rd.pod<bool>(), c.ref = rd.pod<reference_job>();
    b.cases.push_back(std::move(c));
  }
  b.guards = rd.pod<guard_options>();
  rd.done();
  return b;
}

std::vector<std::byte> encode(const gpu_batch_response& r) {
  writer w;
  w.pod(static_cast<uint64_t>(r.cases.size()));
  for (const auto& c : r.cases) {
    w.pod(c.faulted), w.str(c.fault), w.pods(c.guards), w.pod(c.compared), w.pod(c.bad), w.pod(c.unwritten),
        w.pod(c.max_abs_err);
    w.pod(c.first_bad);
  }
  w.pod(r.faulted), w.str(r.fault), w.str(r.error), w.pod(r.worker_exiting);
  w.pod(r.setup_ms), w.pod(r.kernels_ms), w.pod(r.check_ms), w.pod(r.total_ms);
  w.pod(r.fill_gpu_ms), w.pod(r.cases_gpu_ms), w.pod(r.verdict_gpu_ms), w.pod(r.guard_gpu_ms);
  return std::move(w.out);
}

gpu_batch_response decode_batch_response(const std::vector<std::byte>& m) {
  reader rd(m);
  gpu_batch_response r;
  const auto n = rd.pod<uint64_t>();
  if (n > m.size()) throw std::runtime_error("gpu wire: bad case count");
  for (uint64_t i = 0; i < n; ++i) {
    case_verdict c;
    c.faulted = rd.pod<bool>(), c.fault = rd.str();
    c.guards = rd.pods<guard_report>(), c.compared = rd.pod<bool>(), c.bad = rd.pod<int64_t>();
    c.unwritten = rd.pod<int64_t>(), c.max_abs_err = rd.pod<double>(), c.first_bad = rd.pod<int64_t>();
    r.cases.push_back(std::move(c));
  }
  r.faulted = rd.pod<bool>(), r.fault = rd.str(), r.error = rd.str(), r.worker_exiting = rd.pod<bool>();
  r.setup_ms = rd.pod<double>(), r.kernels_ms = rd.pod<double>(), r.check_ms = rd.pod<double>();
  r.total_ms = rd.pod<double>();
  r.fill_gpu_ms = rd.pod<double>(), r.cases_gpu_ms = rd.pod<double>(), r.verdict_gpu_ms = rd.pod<double>();
  r.guard_gpu_ms = rd.pod<double>();
  rd.done();
  return r;
}

std::vector<std::byte> encode(const gpu_response& r) {
  writer w;
  w.pod(static_cast<uint64_t>(r.runs.size()));
  for (const auto& x : r.runs) {
    w.pod(x.mode), w.pod(x.faulted), w.str(x.fault), w.pods(x.touched), w.pod(x.oob_count),
        w.pod(x.index_overflows), w.pod(x.uninitialized_reads);
    w.pods(x.oob), w.pods(x.guards), w.pods(x.output), w.pods(x.states);
    w.pod(x.setup_ms), w.pod(x.kernels_ms), w.pod(x.guard_ms), w.pod(x.total_ms);
  }
  w.str(r.error), w.pod(r.worker_exiting);
  return std::move(w.out);
}

gpu_response decode_response(const std::vector<std::byte>& m) {
  reader rd(m);
  gpu_response r;
  const auto n = rd.pod<uint64_t>();
  if (n > m.size()) throw std::runtime_error("gpu wire: bad run count");
  for (uint64_t i = 0; i < n; ++i) {
    run_result x;
    x.mode = rd.pod<run_mode>(), x.faulted = rd.pod<bool>(), x.fault = rd.str();
    x.touched = rd.pods<int64_t>(), x.oob_count = rd.pod<int64_t>(), x.index_overflows = rd.pod<int64_t>();
    x.uninitialized_reads = rd.pod<int64_t>();
    x.oob = rd.pods<device_oob_record>(), x.guards = rd.pods<guard_report>();
    x.output = rd.pods<std::byte>(), x.states = rd.pods<std::byte>();
    x.setup_ms = rd.pod<double>(), x.kernels_ms = rd.pod<double>();
    x.guard_ms = rd.pod<double>(), x.total_ms = rd.pod<double>();
    r.runs.push_back(std::move(x));
  }
  r.error = rd.str(), r.worker_exiting = rd.pod<bool>();
  rd.done();
  return r;
}

std::vector<std::byte> encode(const worker_hello& h) {
  writer w;
  w.pod(h.device_count), w.str(h.device_name), w.str(h.error), w.str(h.engines);
  return std::move(w.out);
}

worker_hello decode_hello(const std::vector<std::byte>& m) {
  reader rd(m);
  worker_hello h;
  h.device_count = rd.pod<int32_t>(), h.device_name = rd.str(), h.error = rd.str(), h.engines = rd.str();
  rd.done();
  return h;
}

bool write_message(int fd, const std::vector<std::byte>& m) {
  const uint64_t n = m.size();
  return write_all(fd, &n, sizeof(n)) && write_all(fd, m.data(), m.size());
}

read_status read_message(int fd, std::vector<std::byte>& m, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  for (;;) {
    const int r = ::poll(&p, 1, timeout_ms);
    if (r > 0) break;
    if (r == 0) return read_status::timeout;
    if (errno != EINTR) return read_status::eof;
  }
  uint64_t n = 0;
  if (!read_all(fd, &n, sizeof(n)) || n > max_message_bytes) return read_status::eof;
  m.resize(static_cast<std::size_t>(n));
  return read_all(fd, m.data(), m.size()) ? read_status::ok : read_status::eof;
}

}  // namespace headroom::gpu
