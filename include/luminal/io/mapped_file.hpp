#pragma once
// A read-only memory mapping of a whole file (RAII). Weight files are used in
// place: readers hand out spans into the mapping instead of copying tensors,
// so opening a 100 MB model costs page-table entries, not 100 MB of heap.

#include <cstddef>
#include <span>
#include <string>

namespace luminal {

class MappedFile {
public:
  MappedFile() = default;
  /// Map `path` read-only. Throws FormatError naming the path and the system
  /// error when it cannot be opened, is not a regular file, or cannot be mapped.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::string& path() const { return path_; }
  /// The file's bytes (empty for an empty file).
  std::span<const std::byte> bytes() const { return {data_, size_}; }
  size_t size() const { return size_; }

private:
  void release() noexcept;
  std::string path_;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
};

/// Bring `bytes` (typically a span of a mapping) into memory and into this
/// process' page tables now: read-ahead advice, then one read per page. A model
/// loader calls it on the weights it binds, so the first forward pass does not
/// pay a page fault per 4 KiB of weights (llama.cpp maps with MAP_POPULATE for
/// the same reason). Harmless on heap memory.
void prefault(std::span<const std::byte> bytes);

}  // namespace luminal
