// The output writer (output_file.hpp): exclusive temporaries, durable renames, stale clean-up.
#include "cli/output_file.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <limits>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/args.hpp"
#include "core/util/error.hpp"

namespace headroom::cli {

namespace {

namespace fs = std::filesystem;

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

std::string folder_of(const std::string& path) {
  const fs::path p(path);
  return p.has_parent_path() ? p.parent_path().string() : ".";
}

// An open file that is removed again unless released.
struct temporary {
  std::string path;
  int fd = -1;
  ~temporary() {
    if (fd >= 0) ::close(fd);
    if (!path.empty()) ::unlink(path.c_str());
  }
};

// Creates PATH.tmp.PID.XXXXXX exclusively, never through a link; errno set on failure.
bool create_temporary(const std::string& path, temporary& t) {
  static const char alnum[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::random_device rd;
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string name = path + ".tmp." + std::to_string(::getpid()) + ".";
    for (int k = 0; k < 6; ++k) name += alnum[rd() % (sizeof alnum - 1)];
    const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0) {
      t.path = name;
      t.fd = fd;
      return true;
    }
    if (errno != EEXIST) return false;
  }
  return false;
}

bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  std::error_code ea, eb;
  const fs::path ca = fs::weakly_canonical(a, ea), cb = fs::weakly_canonical(b, eb);
  return !ea && !eb && ca == cb;
}

bool process_runs(long pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

// The pid in NAME.tmp.PID or NAME.tmp.PID.XXXXXX, 0 when the name is not of that form.
long temporary_pid(const std::string& name) {
  const auto at = name.rfind(".tmp.");
  if (at == std::string::npos || at == 0) return 0;
  std::string rest = name.substr(at + 5);
  if (const auto dot = rest.find('.'); dot != std::string::npos) {
    if (rest.size() - dot - 1 != 6) return 0;
    rest.resize(dot);
  }
  if (rest.empty() || rest.size() > 10 || rest.find_first_not_of("0123456789") != std::string::npos) return 0;
  const long long pid = std::stoll(rest);
  return pid <= std::numeric_limits<pid_t>::max() ? static_cast<long>(pid) : 0;
}

}  // namespace

void check_output(const std::string& flag, const std::string& path, const std::vector<std::string>& inputs) {
  auto bad = [&](const std::string& why) { throw input_error(cmdline, flag, quoted(path), why); };
  if (path.empty()) bad("is empty; give a file name");
  if (!fs::path(path).has_filename()) bad("names a folder, not a file");
  std::error_code ec;
  if (!fs::is_directory(folder_of(path), ec)) bad("its folder does not exist");
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {  // a link is replaced by the rename, never written through
    if (S_ISDIR(st.st_mode)) bad("is a folder");
    if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) bad("exists and is not a regular file");
  }
  for (const auto& in : inputs)
    if (same_file(path, in)) bad("is the input file " + quoted(in) + "; it would be overwritten");
  probe_folder(flag, folder_of(path));
}

void probe_folder(const std::string& flag, const std::string& dir) {
  temporary t;
  if (!create_temporary((fs::path(dir) / ".headroom-probe").string(), t))
    throw input_error(cmdline, flag, quoted(dir),
                      std::string("its folder cannot be written: ") + std::strerror(errno));
}

void write_durably(const std::string& path, const std::string& text) {
  auto fail = [&](const char* step) {
    throw input_error(path, "<output>", quoted(path), std::string(step) + ": " + std::strerror(errno));
  };
  temporary t;
  if (!create_temporary(path, t)) fail("cannot create its temporary file");
  if (!write_all(t.fd, text)) fail("cannot be written");
  if (::fsync(t.fd) != 0) fail("cannot be flushed to disk");
  const int fd = t.fd;
  t.fd = -1;
  if (::close(fd) != 0) fail("cannot be written");
  if (::rename(t.path.c_str(), path.c_str()) != 0) fail("cannot be renamed into place");
  t.path.clear();  // renamed: nothing to remove
  const int dir = ::open(folder_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {  // the rename itself made durable; a folder that cannot be opened is left be
    ::fsync(dir);
    ::close(dir);
  }
}

int remove_stale_temporaries(const std::string& dir) {
  int removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const long pid = temporary_pid(it->path().filename().string());
    if (pid == 0 || process_runs(pid)) continue;
    removed += ::unlink(it->path().c_str()) == 0;  // unlink never follows a link; folders fail
  }
  return removed;
}

}  // namespace headroom::cli
