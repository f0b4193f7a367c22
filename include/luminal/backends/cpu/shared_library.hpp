#pragma once
// A loaded shared object (dlopen) with RAII ownership: the library is closed
// when the last handle goes away, so keep the SharedLibrary (usually through a
// shared_ptr) alive as long as any function pointer taken from it is used.

#include <string>

namespace luminal::cpu {

class SharedLibrary {
public:
  SharedLibrary() = default;
  /// dlopen(path, RTLD_NOW | RTLD_LOCAL). Throws luminal::Error with dlerror()'s
  /// message if the file cannot be loaded.
  explicit SharedLibrary(const std::string& path);
  ~SharedLibrary();
  SharedLibrary(SharedLibrary&& other) noexcept;
  SharedLibrary& operator=(SharedLibrary&& other) noexcept;
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  bool is_open() const { return handle_ != nullptr; }
  const std::string& path() const { return path_; }
  /// The address of an exported symbol. Throws luminal::LookupError naming the
  /// symbol and the library if it is missing.
  void* symbol(const std::string& name) const;
  /// The address of an exported symbol, or nullptr.
  void* find_symbol(const std::string& name) const;

  /// Cheap structural check of an ELF shared object on disk: the header is
  /// sane and the file is long enough for every segment and the section
  /// table. A truncated file passes dlopen's own checks and then crashes with
  /// SIGBUS when a segment beyond the end of the file is touched, so cached
  /// files are checked with this before they are loaded.
  static bool looks_complete(const std::string& path);

private:
  void close();
  void* handle_ = nullptr;
  std::string path_;
};

}  // namespace luminal::cpu
