#include "luminal/backends/cpu/shared_library.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <sys/stat.h>

#include <cstring>
#include <fstream>
#include <utility>
#include <vector>

#include "luminal/error.hpp"

namespace luminal::cpu {

SharedLibrary::SharedLibrary(const std::string& path) : path_(path) {
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) {
    const char* why = dlerror();
    throw Error("cannot load shared object " + path + ": " + (why ? why : "unknown dlopen error"));
  }
}

SharedLibrary::~SharedLibrary() {
  close();
}

SharedLibrary::SharedLibrary(SharedLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), path_(std::move(other.path_)) {}

SharedLibrary& SharedLibrary::operator=(SharedLibrary&& other) noexcept {
  if (this != &other) {
    close();
    handle_ = std::exchange(other.handle_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

void SharedLibrary::close() {
  if (handle_ != nullptr) dlclose(handle_);
  handle_ = nullptr;
}

void* SharedLibrary::find_symbol(const std::string& name) const {
  if (handle_ == nullptr) return nullptr;
  return dlsym(handle_, name.c_str());
}

void* SharedLibrary::symbol(const std::string& name) const {
  void* p = find_symbol(name);
  if (p == nullptr)
    throw LookupError("symbol \"" + name + "\" not found in " +
                      (handle_ ? path_ : std::string("a closed library")));
  return p;
}

bool SharedLibrary::looks_complete(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  const auto size = static_cast<uint64_t>(st.st_size);
  std::ifstream in(path, std::ios::binary);
  Elf64_Ehdr eh{};
  if (size < sizeof(eh) || !in.read(reinterpret_cast<char*>(&eh), sizeof(eh))) return false;
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_type != ET_DYN || eh.e_phentsize != sizeof(Elf64_Phdr))
    return false;
  auto fits = [&](uint64_t offset, uint64_t length) {
    return offset <= size && length <= size - offset;
  };
  if (!fits(eh.e_phoff, uint64_t{eh.e_phnum} * eh.e_phentsize)) return false;
  if (eh.e_shnum != 0 && !fits(eh.e_shoff, uint64_t{eh.e_shnum} * eh.e_shentsize)) return false;
  std::vector<Elf64_Phdr> ph(eh.e_phnum);
  in.seekg(static_cast<std::streamoff>(eh.e_phoff));
  if (!in.read(reinterpret_cast<char*>(ph.data()),
               static_cast<std::streamsize>(ph.size() * sizeof(Elf64_Phdr))))
    return false;
  for (const Elf64_Phdr& p : ph)
    if (!fits(p.p_offset, p.p_filesz)) return false;
  return true;
}

}  // namespace luminal::cpu
