#pragma once
// The CPU backend's JIT: generated C++ source -> shared object -> function
// pointers, with a disk cache.
//
// Kernels are compiled by the system compiler (LUMINAL_CXX, default `c++`)
// for the host ISA (`-O3 -march=native`, C++17, no fast-math: results must
// match the reference interpreter, so `-ffp-contract=off` keeps a * b + c from
// becoming an FMA). Many kernels share one translation unit to amortise the
// compiler's start-up; the units of one build are compiled in parallel, up to
// `max_jobs` compiler processes at a time.
//
// Cache: every kernel has a key, a 128-bit hash of (compiler identity, flags,
// host CPU, prelude, kernel source). A compiled unit is stored as
// <cache>/u-<hash>.so (its source next to it as .cpp), and each kernel it
// holds gets a small index file <cache>/<key>.idx naming the unit, so a later
// build finds every kernel it has seen before, whichever unit it came from.
// Files are written under temporary names and renamed into place, so
// concurrent processes sharing a cache never see partial files. A cached unit
// that is damaged (truncated, not loadable, missing a symbol) is deleted and
// its kernels are compiled again: a bad cache costs time, never a crash.
//
// A large prelude (luminal's) is written once to <cache>/p-<hash>.hpp, which
// the units include, and with GCC precompiled next to it (.hpp.gch, the
// units' flags): parsing it cost each unit ~0.12 s, half of a small unit's
// compile. Where the precompiled header cannot be made (another compiler, a
// failure) the units include the plain header, the same source.
//
// Library templates: the prelude's large function templates (the quantized
// and AMX products, ~2 s of compiling each) that a kernel names in
// JitKernel::library_calls are compiled once per header into
// <header dir>/l-<hash>.so (an explicit instantiation of the one instance);
// a unit declares the instance `extern template` and links against that
// library (by its absolute path), so its own compile is a few tenths of a
// second. The libraries are built in parallel with the units that do not
// need them; a unit waits for those it needs.
//
// <cache> is ${LUMINAL_CACHE_DIR:-$HOME/.cache/luminal}/cpu-kernels.

#include <memory>
#include <string>
#include <vector>

#include "luminal/backends/cpu/shared_library.hpp"
#include "luminal/error.hpp"

namespace luminal::cpu {

/// One kernel's source: C++ definitions compiled after a shared prelude.
struct JitKernel {
  std::string name;                  // for messages ("k12_add_mul")
  std::string code;                  // definitions, including the extern "C" entry points
  std::vector<std::string> symbols;  // the extern "C" symbols `code` defines
  /// Instances of the prelude's library templates that `code` calls
  /// ("lk::qgemm_i16_x8<lk::q4_1_block>"; each template defined with external
  /// linkage). With a header prelude each instance is compiled once into a
  /// library of its own, which the units calling it link against, instead of
  /// being compiled again (~2 s for a quantized product) in every unit.
  std::vector<std::string> library_calls;
};

struct JitOptions {
  std::string compiler;                  // empty: $LUMINAL_CXX, else "c++"
  std::vector<std::string> flags;        // empty: default_flags()
  std::vector<std::string> extra_flags;  // appended to flags (part of the cache key)
  std::string cache_dir;                 // empty: default_cache_dir()
  int max_jobs = 0;               // compiler processes at once; 0: ThreadPool::default_size()
  int max_kernels_per_unit = 64;  // a unit never holds more kernels than this
  bool use_cache = true;          // false: compile everything (the cache is still written)
};

/// A compiler failure: the kernel whose source the first error points into
/// ("prelude" if it is in the shared prelude) and the position relative to
/// that kernel's code (1-based); the failing unit's source is kept on disk.
class KernelCompileError : public Error {
public:
  KernelCompileError(const std::string& message, std::string kernel, int line, int column,
                     std::string source_path)
      : Error(message),
        kernel_(std::move(kernel)),
        line_(line),
        column_(column),
        source_path_(std::move(source_path)) {}
  const std::string& kernel() const { return kernel_; }
  int line() const { return line_; }
  int column() const { return column_; }
  const std::string& source_path() const { return source_path_; }

private:
  std::string kernel_;
  int line_;
  int column_;
  std::string source_path_;
};

class JitCompiler {
public:
  explicit JitCompiler(JitOptions options = {});

  /// Compile (or load from the cache) every kernel. Result i is the library
  /// that defines kernels[i].symbols. Throws KernelCompileError when the
  /// compiler rejects a unit, luminal::Error when it cannot be run.
  std::vector<std::shared_ptr<SharedLibrary>> build(const std::string& prelude,
                                                    const std::vector<JitKernel>& kernels);

  struct Stats {
    size_t kernels_from_cache = 0;
    size_t kernels_compiled = 0;
    size_t units_compiled = 0;
    size_t libraries_compiled = 0;     // library template instances (l-<hash>.so) compiled
    size_t damaged_cache_entries = 0;  // cached units that failed the checks and were rebuilt
    std::string compiler_output;       // what the compiler printed for the units compiled
  };
  /// Totals over every build() of this compiler.
  const Stats& stats() const { return stats_; }

  const std::string& cache_dir() const { return cache_dir_; }
  const std::vector<std::string>& flags() const { return flags_; }
  /// The cache key of a kernel (hex).
  std::string kernel_key(const std::string& prelude, const JitKernel& kernel) const;
  /// The cached unit holding this kernel according to its index file, or "".
  std::string cached_unit_path(const std::string& prelude, const JitKernel& kernel) const;

  static std::vector<std::string> default_flags();
  /// Whether LUMINAL_AMX is "off" (or "0"): then no AMX kernel is offered and
  /// the kernels are compiled without tile code (-DLK_NO_AMX).
  static bool amx_turned_off();
  static std::string default_cache_dir();

private:
  struct Unit;
  void compile_units(std::vector<Unit>& units);
  /// What a unit starts with: the prelude itself, or for a large one an
  /// #include of its header in the cache (precompiled where possible).
  struct PreludeText {
    std::string text;
    std::string header;  // the header's path; empty where the prelude is inline
  };
  PreludeText prelude_text(const std::string& prelude);

  std::string compiler_;
  std::vector<std::string> flags_;
  std::string cache_dir_;
  int max_jobs_;
  int max_kernels_per_unit_;
  bool use_cache_;
  std::string identity_;  // compiler version + flags + host CPU, hashed into every key
  Stats stats_;
};

/// A 128-bit non-cryptographic hash of `data` as 32 hex digits (stable across
/// runs and machines; used for cache keys).
std::string content_hash(const std::string& data);

}  // namespace luminal::cpu
