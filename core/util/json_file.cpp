// Reading an input file: regular files only, bounded in size (json_file.hpp).
#include "core/util/json_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace headroom {
namespace {

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

class file_descriptor {
 public:
  explicit file_descriptor(int fd) : fd_(fd) {}
  ~file_descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  file_descriptor(const file_descriptor&) = delete;
  file_descriptor& operator=(const file_descriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "is a directory, not a JSON file";
  if (S_ISFIFO(mode)) return "is a FIFO, not a regular file";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "is a device, not a regular file";
  if (S_ISSOCK(mode)) return "is a socket, not a regular file";
  return "is not a regular file";
}

std::string too_large(int64_t bytes) {
  return "is " + std::to_string(bytes) + " bytes or more; input files are limited to " +
         std::to_string(max_input_bytes >> 20) + " MiB";
}

// Opens without blocking (a FIFO with no writer would block forever) and refuses anything but a
// regular file of at most max_input_bytes before reading a byte.
std::string read_bounded(const std::string& path) {
  file_descriptor fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (fd.get() < 0)
    throw input_error(path, "<file>", quoted(path), std::string("cannot be opened: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    throw input_error(path, "<file>", quoted(path), std::string("cannot be read: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw input_error(path, "<file>", quoted(path), kind_of(st.st_mode));
  if (st.st_size > max_input_bytes) throw input_error(path, "<file>", quoted(path), too_large(st.st_size));
  std::string text(static_cast<std::size_t>(st.st_size) + 1, '\0');  // + 1: sees a file that grew
  std::size_t got = 0;
  for (;;) {
    if (got == text.size()) {
      if (static_cast<int64_t>(got) > max_input_bytes)
        throw input_error(path, "<file>", quoted(path), too_large(static_cast<int64_t>(got)));
      text.resize(std::min<std::size_t>(got * 2, static_cast<std::size_t>(max_input_bytes) + 1));
    }
    const ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      throw input_error(path, "<file>", quoted(path), std::string("cannot be read: ") + std::strerror(errno));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  text.resize(got);
  return text;
}

}  // namespace

nlohmann::json read_json_file(const std::string& path) { return parse_json_text(read_bounded(path), path); }

}  // namespace headroom
