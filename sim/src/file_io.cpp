// Bounded reads of regular files and the one atomic, exclusive write path for results (file_io.hpp).
#include "scalescope/sim/file_io.hpp"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace scalescope {

namespace fs = std::filesystem;

namespace {

std::string kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a folder";
  if (S_ISFIFO(m)) return "a FIFO (named pipe)";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISLNK(m)) return "a symbolic link";
  return "not a regular file";
}

std::string errno_text(int e) {
  if (e == ENOENT) return "file does not exist";
  if (e == ELOOP) return "symbolic link loop (too many levels of links)";
  if (e == EACCES) return "permission denied";
  if (e == ENOTDIR) return "a component of the path is not a folder";
  if (e == ENAMETOOLONG) return "file name too long";
  return std::strerror(e);
}

std::string mib(std::uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

Error too_large_error(const std::string& name, std::uint64_t size, std::uint64_t max_bytes, std::string_view what) {
  return input_error(name, "", "is " + std::to_string(size) + " bytes; a " + std::string(what) + " larger than " +
                                   mib(max_bytes) + " is refused (bounded memory)");
}

/// Closes a file descriptor when it goes out of scope.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

bool write_all(int fd, std::string_view data) {
  const char* p = data.data();
  std::size_t left = data.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return true;
}

/// A temporary name no other run uses: ".NAME.tmp.PID.SERIAL.NANOSECONDS".
std::string temp_name(const std::string& base) {
  static std::atomic<unsigned> serial{0};
  const auto ns = std::chrono::steady_clock::now().time_since_epoch().count();
  char buf[64];
  std::snprintf(buf, sizeof buf, ".tmp.%ld.%u.%llx", static_cast<long>(::getpid()), serial.fetch_add(1),
                static_cast<unsigned long long>(ns));
  return "." + base + buf;
}

Error write_error(const fs::path& file, const std::string& what, int e) {
  return Error{Error::Kind::runtime, file.string(), "", what + ": " + std::strerror(e)};
}

}  // namespace

Expected<int> open_input_file(const fs::path& file, std::uint64_t max_bytes, std::string_view what) {
  const std::string name = file.string();
  struct stat st {};
  if (::stat(name.c_str(), &st) != 0) return input_error(name, "", errno_text(errno));
  if (!S_ISREG(st.st_mode)) return input_error(name, "", "is " + kind_of(st.st_mode) + ", expected a regular " + std::string(what));
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) return too_large_error(name, static_cast<std::uint64_t>(st.st_size), max_bytes, what);
  // O_NONBLOCK: if the file was swapped for a FIFO after stat(), open() does not wait for a writer.
  const int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return input_error(name, "", "cannot open for reading: " + errno_text(errno));
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return input_error(name, "", "is not a regular file");
  }
  return fd;
}

Expected<std::string> read_input_file(const fs::path& file, std::uint64_t max_bytes, std::string_view what) {
  const std::string name = file.string();
  auto opened = open_input_file(file, max_bytes, what);
  if (!opened) return opened.error();
  Fd fd(*opened);
  struct stat st {};
  if (::fstat(fd.fd, &st) != 0) return input_error(name, "", std::string("read failed: ") + std::strerror(errno));
  auto too_large = [&](std::uint64_t size) { return too_large_error(name, size, max_bytes, what); };
  std::string out;
  out.resize(static_cast<std::size_t>(st.st_size));
  std::size_t got = 0;
  for (;;) {
    if (got == out.size()) {
      if (out.size() > max_bytes) return too_large(out.size());
      out.resize(out.size() + 65536);  // the file grew since fstat()
    }
    const ssize_t n = ::read(fd.fd, out.data() + got, out.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      return input_error(name, "", std::string("read failed: ") + std::strerror(errno));
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  if (got > max_bytes) return too_large(got);
  out.resize(got);
  return out;
}

Expected<bool> check_output_target(const fs::path& file) {
  if (file == "-") return true;
  const std::string name = file.string();
  if (!file.has_filename()) return input_error(name, "", "names a folder, expected an output file name");
  const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return input_error(name, "", "folder " + dir.string() + " does not exist");
  if (::lstat(name.c_str(), &st) != 0) {
    if (errno == ENOENT) return true;
    return input_error(name, "", errno_text(errno));
  }
  if (S_ISREG(st.st_mode)) return true;
  if (S_ISLNK(st.st_mode)) {
    std::error_code ec;
    const auto to = fs::read_symlink(file, ec);
    return input_error(name, "", "is a symbolic link" + (ec ? std::string() : " to " + to.string()) +
                                     "; results are written only to regular files (give the file it points to)");
  }
  return input_error(name, "", "is " + kind_of(st.st_mode) + "; results are written only to regular files or new files");
}

Expected<bool> write_file_atomic(const fs::path& file, std::string_view content) {
  if (file == "-") {
    const bool ok = std::fwrite(content.data(), 1, content.size(), stdout) == content.size() && std::fflush(stdout) == 0;
    if (!ok) return Error{Error::Kind::runtime, "-", "", "cannot write to stdout"};
    return true;
  }
  if (auto ok = check_output_target(file); !ok) return ok.error();
  const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
  const std::string base = file.filename().string();
  Fd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dfd.fd < 0) return write_error(file, "cannot open folder " + dir.string(), errno);
  struct stat old {};
  const bool had_old = ::fstatat(dfd.fd, base.c_str(), &old, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(old.st_mode);

  // An unnamed inode (O_TMPFILE) vanishes with the process if it is killed before the rename; it gets a
  // name (linkat through /proc) only right before the rename. Else an O_CREAT|O_EXCL|O_NOFOLLOW name.
  std::string tmp;
  bool named = false;
  int raw = ::access("/proc/self/fd", X_OK) == 0 ? ::openat(dfd.fd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666) : -1;
  if (raw < 0) {
    for (int attempt = 0; attempt < 100 && raw < 0; ++attempt) {
      tmp = temp_name(base);
      raw = ::openat(dfd.fd, tmp.c_str(), O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC, 0666);
      if (raw < 0 && errno != EEXIST) return write_error(file, "cannot create a temporary file in " + dir.string(), errno);
    }
    if (raw < 0) return write_error(file, "cannot create a temporary file in " + dir.string(), EEXIST);
    named = true;
  }
  Fd fd(raw);
  auto fail = [&](const std::string& what) {
    const int e = errno;
    if (named) ::unlinkat(dfd.fd, tmp.c_str(), 0);
    return write_error(file, what, e);
  };
  if (had_old && ::fchmod(fd.fd, old.st_mode & 07777) != 0) return fail("cannot set the permissions of the temporary file");
  if (!write_all(fd.fd, content)) return fail("write failed");
  if (::fsync(fd.fd) != 0) return fail("fsync failed");
  if (!named) {
    const std::string proc = "/proc/self/fd/" + std::to_string(fd.fd);
    for (int attempt = 0; attempt < 100 && !named; ++attempt) {
      tmp = temp_name(base);
      if (::linkat(AT_FDCWD, proc.c_str(), dfd.fd, tmp.c_str(), AT_SYMLINK_FOLLOW) == 0) {
        named = true;
      } else if (errno != EEXIST) {
        return write_error(file, "cannot link the temporary file into " + dir.string(), errno);
      }
    }
    if (!named) return write_error(file, "cannot link the temporary file into " + dir.string(), EEXIST);
  }
  if (::close(fd.fd) != 0) {
    fd.fd = -1;
    return fail("close failed");
  }
  fd.fd = -1;
  if (::renameat(dfd.fd, tmp.c_str(), dfd.fd, base.c_str()) != 0) return fail("cannot rename the temporary file into place");
  ::fsync(dfd.fd);  // the rename itself reaches the disk; a failure here changes nothing already visible
  return true;
}

}  // namespace scalescope
