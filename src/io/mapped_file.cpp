#include "luminal/io/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "luminal/io/format_error.hpp"

namespace luminal {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what, int err) {
  throw FormatError(path + ": cannot " + what + ": " + std::strerror(err));
}

// Closes the descriptor on every path out of the constructor; the mapping
// stays valid after close.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

MappedFile::MappedFile(const std::string& path) : path_(path) {
  Fd file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) fail(path, "open", errno);
  struct stat st {};
  if (::fstat(file.fd, &st) != 0) fail(path, "stat", errno);
  if (!S_ISREG(st.st_mode)) throw FormatError(path + ": not a regular file");
  size_ = static_cast<size_t>(st.st_size);
  if (size_ == 0) return;  // mmap rejects length 0; an empty span is the right view
  void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, file.fd, 0);
  if (p == MAP_FAILED) {
    const int err = errno;
    size_ = 0;
    fail(path, "map", err);
  }
  data_ = static_cast<const std::byte*>(p);
}

MappedFile::~MappedFile() {
  release();
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void MappedFile::release() noexcept {
  if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

void prefault(std::span<const std::byte> bytes) {
  if (bytes.empty()) return;
  const long page_size = ::sysconf(_SC_PAGESIZE);
  const auto page = static_cast<uintptr_t>(page_size > 0 ? page_size : 4096);
  const auto begin = reinterpret_cast<uintptr_t>(bytes.data()) & ~(page - 1);
  const auto end = reinterpret_cast<uintptr_t>(bytes.data()) + bytes.size();
  // Advice only: an error (memory that is not a mapping) changes nothing.
  ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_WILLNEED);
  unsigned sum = 0;
  for (uintptr_t a = std::max(begin, reinterpret_cast<uintptr_t>(bytes.data())); a < end;
       a = (a & ~(page - 1)) + page)
    sum += static_cast<unsigned>(*reinterpret_cast<const volatile unsigned char*>(a));
  static_cast<void>(sum);
}

}  // namespace luminal
