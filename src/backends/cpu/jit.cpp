#include "luminal/backends/cpu/jit.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>

#include "luminal/backends/cpu/thread_pool.hpp"

extern char** environ;

namespace luminal::cpu {

namespace fs = std::filesystem;

// ---- hashing -----------------------------------------------------------------------------

namespace {

uint64_t mix64(uint64_t x) {  // splitmix64's finaliser: a bijective avalanche
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

uint64_t rotl(uint64_t x, int r) {
  return (x << r) | (x >> (64 - r));
}

}  // namespace

std::string content_hash(const std::string& data) {
  // Two independently seeded lanes over 8-byte words; the length is mixed in
  // so that inputs differing only by trailing zero bytes differ.
  uint64_t h1 = 0x243f6a8885a308d3ULL ^ data.size();
  uint64_t h2 = 0x13198a2e03707344ULL ^ mix64(data.size());
  for (size_t i = 0; i < data.size(); i += 8) {
    uint64_t w = 0;
    std::memcpy(&w, data.data() + i, std::min<size_t>(8, data.size() - i));
    h1 = rotl(h1 ^ mix64(w), 27) * 0x9e3779b97f4a7c15ULL + 0x52dce729ULL;
    h2 = rotl(h2 ^ mix64(w ^ 0xa0761d6478bd642fULL), 31) * 0xc2b2ae3d27d4eb4fULL + 0x38495ab5ULL;
  }
  h1 = mix64(h1 ^ rotl(h2, 17));
  h2 = mix64(h2 ^ h1);
  char out[33];
  std::snprintf(out, sizeof(out), "%016llx%016llx", static_cast<unsigned long long>(h1),
                static_cast<unsigned long long>(h2));
  return out;
}

// ---- processes and files -----------------------------------------------------------------

namespace {

// Start `argv` with stdout and stderr going to `log_path` (stdin from /dev/null).
// Returns the pid, or -1 with errno_out set when the program cannot be started.
pid_t spawn(const std::vector<std::string>& argv, const std::string& log_path, int* errno_out) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    *errno_out = rc;
    return -1;
  }
  return pid;
}

// Exit status of a child (-1 if it did not exit normally).
int wait_for(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Write via a temporary name and rename: readers see the old file or the whole new one.
void write_file_atomic(const std::string& path, const std::string& text) {
  static std::atomic<uint64_t> counter{0};
  const std::string tmp =
      path + "." + std::to_string(getpid()) + "." + std::to_string(counter++) + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    if (!out) throw Error("cannot write " + tmp);
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw Error("cannot rename " + tmp + " to " + path);
  }
}

std::string unique_suffix() {
  static std::atomic<uint64_t> counter{0};
  return std::to_string(getpid()) + "." + std::to_string(counter++);
}

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

// The compiler's identity (its --version banner), once per compiler per process.
std::string compiler_identity(const std::string& compiler) {
  static std::mutex mutex;
  static std::map<std::string, std::string> known;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = known.find(compiler); it != known.end()) return it->second;
  const std::string log =
      (fs::temp_directory_path() / ("luminal-cxx-version." + unique_suffix())).string();
  int err = 0;
  const pid_t pid = spawn({compiler, "--version"}, log, &err);
  if (pid < 0)
    throw Error("cannot run the C++ compiler \"" + compiler +
                "\" (set LUMINAL_CXX): " + std::strerror(err));
  const int rc = wait_for(pid);
  std::string text = read_file(log);
  std::error_code ec;
  fs::remove(log, ec);
  if (rc != 0)
    throw Error("the C++ compiler \"" + compiler + "\" failed to report its version: " + text);
  return known[compiler] = first_line(text);
}

// The host CPU's model and feature flags: -march=native code must not be
// loaded from a cache shared with a different machine.
std::string host_cpu() {
  static const std::string cpu = [] {
    std::ifstream in("/proc/cpuinfo");
    std::string line, model, flags;
    while (std::getline(in, line)) {
      if (model.empty() && line.rfind("model name", 0) == 0) model = line;
      if (flags.empty() && line.rfind("flags", 0) == 0) flags = line;
    }
    return model + "\n" + flags;
  }();
  return cpu;
}

size_t count_lines(const std::string& text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace

// ---- the compiler ------------------------------------------------------------------------

struct JitCompiler::Unit {
  std::string name;  // "u-<hash>", or "l-<hash>" for a library template instance
  std::string dir;   // where its .so is kept (the cache; a library: its header's directory)
  std::string source;
  std::string instance;            // a library: the instance it defines
  std::vector<std::string> link;   // libraries (.so paths) it links against
  std::vector<size_t> after;       // units of the same compile_units call it waits for
  std::vector<size_t> kernels;     // indexes into the build's kernels
  std::vector<std::string> names;  // kernel names
  std::vector<size_t> first_line;  // 1-based line of each kernel's code in `source`
  // Results of compile_units:
  bool ok = false;
  std::string log;
  std::string kept_source;  // where a failed unit's source was kept
};

std::vector<std::string> JitCompiler::default_flags() {
  std::vector<std::string> flags = {
      "-O3",     "-march=native",     "-std=c++17",      "-fPIC",
      "-shared", "-ffp-contract=off", "-fno-math-errno", "-fno-trapping-math"};
  // LUMINAL_AMX=off: no AMX tile code in the kernels (the prelude's LK_NO_AMX).
  if (amx_turned_off()) flags.push_back("-DLK_NO_AMX");
  return flags;
}

bool JitCompiler::amx_turned_off() {
  const char* amx = std::getenv("LUMINAL_AMX");
  return amx != nullptr && (std::string(amx) == "off" || std::string(amx) == "0");
}

std::string JitCompiler::default_cache_dir() {
  std::string root;
  if (const char* dir = std::getenv("LUMINAL_CACHE_DIR"); dir != nullptr && *dir != '\0') {
    root = dir;
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    root = std::string(home) + "/.cache/luminal";
  } else {
    root = (fs::temp_directory_path() / ("luminal-cache-" + std::to_string(getuid()))).string();
  }
  return root + "/cpu-kernels";
}

JitCompiler::JitCompiler(JitOptions options)
    : compiler_(std::move(options.compiler)),
      flags_(options.flags.empty() ? default_flags() : std::move(options.flags)),
      cache_dir_(options.cache_dir.empty() ? default_cache_dir() : std::move(options.cache_dir)),
      max_jobs_(options.max_jobs > 0 ? options.max_jobs : ThreadPool::default_size()),
      max_kernels_per_unit_(std::max(1, options.max_kernels_per_unit)),
      use_cache_(options.use_cache) {
  if (compiler_.empty()) {
    const char* env = std::getenv("LUMINAL_CXX");
    compiler_ = env != nullptr && *env != '\0' ? env : "c++";
  }
  for (std::string& f : options.extra_flags) flags_.push_back(std::move(f));
  std::error_code ec;
  fs::create_directories(cache_dir_, ec);
  if (ec || !fs::is_directory(cache_dir_))
    throw Error("cannot create the kernel cache directory " + cache_dir_ + ": " + ec.message());
  identity_ = compiler_identity(compiler_) + "\n" + host_cpu() + "\n";
  for (const std::string& f : flags_) identity_ += f + " ";
}

std::string JitCompiler::kernel_key(const std::string& prelude, const JitKernel& kernel) const {
  std::string all = identity_;
  all += '\0';
  all += prelude;
  all += '\0';
  all += kernel.code;
  for (const std::string& s : kernel.symbols) all += '\0' + s;
  for (const std::string& c : kernel.library_calls) all += '\1' + c;
  return content_hash(all);
}

std::string JitCompiler::cached_unit_path(const std::string& prelude,
                                          const JitKernel& kernel) const {
  const std::string idx = cache_dir_ + "/" + kernel_key(prelude, kernel) + ".idx";
  if (!fs::exists(idx)) return "";
  const std::string unit = first_line(read_file(idx));
  // Only plain unit names: an index file is never allowed to point elsewhere.
  if (unit.rfind("u-", 0) != 0 || unit.find('/') != std::string::npos) return "";
  return cache_dir_ + "/" + unit + ".so";
}

namespace {

bool defines_all(const SharedLibrary& lib, const std::vector<std::string>& symbols) {
  return std::all_of(symbols.begin(), symbols.end(),
                     [&](const std::string& s) { return lib.find_symbol(s) != nullptr; });
}

}  // namespace

void JitCompiler::compile_units(std::vector<Unit>& units) {
  struct Running {
    size_t unit;
    pid_t pid;
    std::string src, so, log;
  };
  std::vector<Running> running;
  std::vector<bool> started(units.size(), false), done(units.size(), false);
  auto finish = [&](const Running& r) {
    const int rc = wait_for(r.pid);
    Unit& u = units[r.unit];
    done[r.unit] = true;
    u.log = read_file(r.log);
    std::error_code ec;
    const std::string base = u.dir + "/" + u.name;
    // Diagnostics name the temporary source; point them at the file that is kept.
    auto point_log_at = [&](const std::string& kept) {
      for (size_t at = u.log.find(r.src); at != std::string::npos;
           at = u.log.find(r.src, at + kept.size()))
        u.log.replace(at, r.src.size(), kept);
    };
    if (rc == 0 && fs::exists(r.so)) {
      point_log_at(base + ".cpp");
      fs::rename(r.so, base + ".so", ec);
      if (!ec) fs::rename(r.src, base + ".cpp", ec);
      fs::remove(r.log, ec);
      u.ok = true;
    } else {
      u.kept_source = u.dir + "/failed-" + u.name + ".cpp";
      point_log_at(u.kept_source);
      fs::rename(r.src, u.kept_source, ec);
      fs::rename(r.log, u.dir + "/failed-" + u.name + ".log", ec);
      fs::remove(r.so, ec);
      if (rc != 0 && u.log.empty()) u.log = "the compiler exited with status " + std::to_string(rc);
    }
  };
  // The first unit not started whose libraries are all built (a unit whose
  // library failed is not compiled: it fails with that library's log).
  auto next_ready = [&]() -> std::optional<size_t> {
    for (size_t i = 0; i < units.size(); ++i) {
      if (started[i]) continue;
      bool ready = true;
      for (size_t a : units[i].after) {
        if (done[a] && !units[a].ok) {
          started[i] = done[i] = true;
          units[i].log = units[a].log;
          units[i].kept_source = units[a].kept_source;
          break;
        }
        ready = ready && done[a];
      }
      if (!started[i] && ready) return i;
    }
    return std::nullopt;
  };
  while (true) {
    const std::optional<size_t> i =
        static_cast<int>(running.size()) < max_jobs_ ? next_ready() : std::nullopt;
    if (!i) {
      if (running.empty()) break;
      finish(running.front());
      running.erase(running.begin());
      continue;
    }
    started[*i] = true;
    const Unit& unit = units[*i];
    const std::string tmp = unit.dir + "/" + unit.name + "." + unique_suffix();
    Running r{*i, -1, tmp + ".cpp", tmp + ".so", tmp + ".log"};
    {
      std::ofstream out(r.src, std::ios::binary);
      out << unit.source;
      if (!out) throw Error("cannot write kernel source " + r.src);
    }
    std::vector<std::string> argv{compiler_};
    argv.insert(argv.end(), flags_.begin(), flags_.end());
    // (a library's calls among its own functions stay inside it)
    if (!unit.instance.empty()) argv.push_back("-Wl,-Bsymbolic");
    argv.insert(argv.end(), {"-o", r.so, r.src});
    // By absolute path: the unit records it as a dependency the loader opens with it.
    argv.insert(argv.end(), unit.link.begin(), unit.link.end());
    int err = 0;
    r.pid = spawn(argv, r.log, &err);
    if (r.pid < 0) {
      for (const Running& other : running) wait_for(other.pid);
      throw Error("cannot run the C++ compiler \"" + compiler_ + "\": " + std::strerror(err));
    }
    running.push_back(std::move(r));
  }
}

// Preludes from this size on are included from a (precompiled) header.
constexpr size_t kHeaderPreludeBytes = 16 * 1024;

JitCompiler::PreludeText JitCompiler::prelude_text(const std::string& prelude) {
  if (prelude.size() < kHeaderPreludeBytes) return {prelude, ""};
  // In the user's cache whatever this compiler's cache is (the header is a
  // function of the prelude and the compiler alone: the tests' temporary
  // caches share it), else in this compiler's.
  std::error_code ec;
  std::string dir = default_cache_dir();
  fs::create_directories(dir, ec);
  if (ec || access(dir.c_str(), W_OK) != 0) dir = cache_dir_;
  const std::string header = dir + "/p-" + content_hash(identity_ + '\0' + prelude) + ".hpp";
  static std::mutex mutex;
  static std::set<std::string> tried;  // (headers whose precompiling this process tried)
  std::lock_guard<std::mutex> lock(mutex);
  try {
    if (!fs::exists(header)) write_file_atomic(header, prelude);
  } catch (const Error&) {
    return {prelude, ""};
  }
  const std::string include = "#include \"" + header + "\"\n";
  // GCC reads <header>.gch in its place when it was built with compatible
  // flags (else it reads the header itself); clang makes one too but does
  // not look for it (one compile of the header, once).
  const std::string gch = header + ".gch";
  // (only for the default flags: a variant's 18 MB would serve a test or two)
  if (!tried.insert(header).second || fs::exists(gch) || flags_ != default_flags())
    return {include, header};
  const std::string tmp = gch + "." + unique_suffix() + ".tmp", log = tmp + ".log";
  std::vector<std::string> argv{compiler_};
  for (const std::string& f : flags_)
    if (f != "-shared") argv.push_back(f);
  argv.insert(argv.end(), {"-x", "c++-header", "-o", tmp, header});
  int err = 0;
  const pid_t pid = spawn(argv, log, &err);
  if (pid >= 0 && wait_for(pid) == 0 && fs::exists(tmp)) fs::rename(tmp, gch, ec);
  fs::remove(tmp, ec);
  fs::remove(log, ec);
  return {include, header};
}

namespace {

// The first "file:line:col: error: message" of a compiler log that points into `source_path`.
struct Diagnostic {
  size_t line = 0;
  int column = 0;
  std::string message;
  bool in_source = false;  // (else a header's line, or none)
};

Diagnostic first_error(const std::string& log, const std::string& source_path) {
  std::istringstream in(log);
  std::string line;
  Diagnostic fallback;
  while (std::getline(in, line)) {
    size_t at = line.find(": error: ");
    size_t skip = 9;
    if (at == std::string::npos) {
      at = line.find(": fatal error: ");
      skip = 15;
    }
    if (at == std::string::npos) continue;
    const std::string where = line.substr(0, at);  // file:line:col
    const size_t c2 = where.rfind(':');
    const size_t c1 = c2 == std::string::npos ? std::string::npos : where.rfind(':', c2 - 1);
    Diagnostic d;
    d.message = line.substr(at + skip);
    if (c1 == std::string::npos) {
      if (fallback.message.empty()) fallback = d;
      continue;
    }
    const std::string file = where.substr(0, c1);
    d.line = std::strtoul(where.c_str() + c1 + 1, nullptr, 10);
    d.column = std::atoi(where.c_str() + c2 + 1);
    if (file == source_path || fs::path(file).filename() == fs::path(source_path).filename()) {
      d.in_source = true;
      return d;
    }
    if (fallback.message.empty()) fallback = d;
  }
  return fallback;
}

std::string head_lines(const std::string& text, size_t n) {
  std::istringstream in(text);
  std::string line, out;
  for (size_t i = 0; i < n && std::getline(in, line); ++i) out += line + "\n";
  return out;
}

}  // namespace

std::vector<std::shared_ptr<SharedLibrary>> JitCompiler::build(
    const std::string& prelude, const std::vector<JitKernel>& kernels) {
  std::vector<std::shared_ptr<SharedLibrary>> libs(kernels.size());
  std::map<std::string, std::shared_ptr<SharedLibrary>> opened;  // unit path -> library
  std::map<std::string, bool> usable;                            // unit path -> loads?
  // Load a cached unit once per build; a damaged one is deleted (it is rebuilt below).
  auto open_cached = [&](const std::string& path) -> std::shared_ptr<SharedLibrary> {
    if (auto it = usable.find(path); it != usable.end()) return it->second ? opened[path] : nullptr;
    std::shared_ptr<SharedLibrary> lib;
    if (SharedLibrary::looks_complete(path)) {
      try {
        lib = std::make_shared<SharedLibrary>(path);
      } catch (const Error&) {
        lib = nullptr;
      }
    }
    usable[path] = lib != nullptr;
    if (lib) {
      opened[path] = lib;
    } else if (fs::exists(path)) {
      ++stats_.damaged_cache_entries;
      std::error_code ec;
      fs::remove(path, ec);
    }
    return lib;
  };

  std::vector<size_t> misses;
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (use_cache_) {
      const std::string path = cached_unit_path(prelude, kernels[i]);
      if (!path.empty()) {
        std::shared_ptr<SharedLibrary> lib = open_cached(path);
        if (lib && defines_all(*lib, kernels[i].symbols)) {
          libs[i] = lib;
          ++stats_.kernels_from_cache;
          continue;
        }
      }
    }
    misses.push_back(i);
  }
  if (misses.empty()) return libs;

  // Cut the misses into units: enough to keep max_jobs compilers busy, none
  // bigger than max_kernels_per_unit.
  const size_t per_unit_cap = static_cast<size_t>(max_kernels_per_unit_);
  size_t num_units = std::max((misses.size() + per_unit_cap - 1) / per_unit_cap,
                              std::min(misses.size(), static_cast<size_t>(max_jobs_)));
  const PreludeText head = prelude_text(prelude);
  // The library template instances (with a header prelude): path -> instance.
  std::map<std::string, std::string> libraries;
  const std::string header_dir =
      head.header.empty() ? "" : fs::path(head.header).parent_path().string();
  auto library_path = [&](const std::string& instance) {
    return header_dir + "/l-" + content_hash(head.header + '\0' + instance) + ".so";
  };
  // Balanced by source size, the largest kernels first, each to the unit
  // with the least so far (a naive seed's fused loops take seconds to
  // compile, a library call a tenth of that: cut by count, one unit was the
  // compile); in kernel order within a unit.
  std::vector<std::vector<size_t>> members(num_units);
  {
    std::vector<size_t> order(misses.size());
    for (size_t m = 0; m < order.size(); ++m) order[m] = m;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return kernels[misses[a]].code.size() > kernels[misses[b]].code.size();
    });
    std::vector<size_t> bytes(num_units, 0);
    for (size_t m : order) {
      size_t pick = num_units;
      for (size_t u = 0; u < num_units; ++u)
        if (members[u].size() < per_unit_cap &&
            (pick == num_units ||
             std::pair(bytes[u], members[u].size()) < std::pair(bytes[pick], members[pick].size())))
          pick = u;
      members[pick].push_back(m);
      bytes[pick] += kernels[misses[m]].code.size();
    }
    for (std::vector<size_t>& unit : members) std::sort(unit.begin(), unit.end());
  }
  std::vector<Unit> units(num_units);
  for (size_t u = 0; u < num_units; ++u) {
    Unit& unit = units[u];
    unit.dir = cache_dir_;
    unit.source = head.text + "\n";
    std::set<std::string> instances;
    for (size_t m : members[u])
      for (const std::string& call : kernels[misses[m]].library_calls) instances.insert(call);
    if (!head.header.empty()) {
      for (const std::string& call : instances) {
        unit.source += "extern template decltype(" + call + ") " + call + ";\n";
        unit.link.push_back(library_path(call));
        libraries[unit.link.back()] = call;
      }
    }
    for (size_t m : members[u]) {
      const JitKernel& k = kernels[misses[m]];
      unit.source += "// ---- kernel " + k.name + "\n";
      unit.first_line.push_back(count_lines(unit.source) + 1);
      unit.source += k.code + "\n";
      unit.kernels.push_back(misses[m]);
      unit.names.push_back(k.name);
    }
    unit.name = "u-" + content_hash(identity_ + '\0' + unit.source);
  }

  // A unit another process already built (its index files may be missing) is reused.
  std::vector<Unit> to_compile;
  std::vector<size_t> to_compile_index;
  // First the libraries the units to compile need that are not built yet
  // (like the header, shared by every cache and kept when use_cache is off).
  std::map<std::string, size_t> library_unit;  // path -> index in to_compile
  auto add_library = [&](const std::string& path) -> std::optional<size_t> {
    if (auto it = library_unit.find(path); it != library_unit.end()) return it->second;
    if (SharedLibrary::looks_complete(path)) return std::nullopt;
    Unit lib;
    lib.dir = header_dir;
    lib.name = fs::path(path).stem().string();
    lib.instance = libraries.at(path);
    lib.source = head.text + "\ntemplate decltype(" + lib.instance + ") " + lib.instance + ";\n";
    library_unit[path] = to_compile.size();
    to_compile.push_back(std::move(lib));
    to_compile_index.push_back(SIZE_MAX);
    return to_compile.size() - 1;
  };
  for (size_t u = 0; u < units.size(); ++u) {
    const std::string path = cache_dir_ + "/" + units[u].name + ".so";
    std::shared_ptr<SharedLibrary> lib =
        use_cache_ && fs::exists(path) ? open_cached(path) : nullptr;
    bool all = lib != nullptr;
    for (size_t k : units[u].kernels) all = all && defines_all(*lib, kernels[k].symbols);
    if (all) {
      units[u].ok = true;
      continue;
    }
    for (const std::string& path : units[u].link)
      if (const std::optional<size_t> lib = add_library(path)) units[u].after.push_back(*lib);
    to_compile.push_back(units[u]);
    to_compile_index.push_back(u);
  }
  compile_units(to_compile);
  for (size_t j = 0; j < to_compile.size(); ++j)
    if (to_compile_index[j] != SIZE_MAX) units[to_compile_index[j]] = to_compile[j];

  for (const Unit& unit : to_compile) {
    if (unit.ok) {
      if (!unit.instance.empty()) {
        ++stats_.libraries_compiled;
      } else {
        ++stats_.units_compiled;
        stats_.kernels_compiled += unit.kernels.size();
      }
      stats_.compiler_output += unit.log;
      continue;
    }
    const Diagnostic d = first_error(unit.log, unit.kept_source);
    if (!unit.instance.empty())
      throw KernelCompileError(
          "the prelude's library template " + unit.instance + " failed to compile (line " +
              std::to_string(d.line) + " of " + (d.in_source ? unit.kept_source : head.header) +
              "): error: " + d.message + "\ncompiler output:\n" + head_lines(unit.log, 30),
          "prelude", static_cast<int>(d.line), d.column, unit.kept_source);
    std::string kernel = "prelude";
    size_t rel_line = d.line;
    int column = d.column;
    for (size_t k = 0; k < unit.first_line.size(); ++k) {
      if (d.line >= unit.first_line[k]) {
        kernel = unit.names[k];
        rel_line = d.line - unit.first_line[k] + 1;
      }
    }
    if (d.line == 0) kernel = unit.names.empty() ? "prelude" : unit.names.front();
    if (d.line > 0 && !d.in_source) kernel = "prelude", rel_line = d.line;  // (its header)
    throw KernelCompileError("cpu kernel \"" + kernel + "\" failed to compile: line " +
                                 std::to_string(rel_line) + ", column " + std::to_string(column) +
                                 " of the kernel (line " + std::to_string(d.line) + " of " +
                                 unit.kept_source + "): error: " + d.message +
                                 "\ncompiler output:\n" + head_lines(unit.log, 30),
                             kernel, static_cast<int>(rel_line), column, unit.kept_source);
  }

  for (const Unit& unit : units) {
    const std::string path = cache_dir_ + "/" + unit.name + ".so";
    std::shared_ptr<SharedLibrary> lib;
    if (auto it = opened.find(path); it != opened.end()) {
      lib = it->second;
    } else {
      lib = std::make_shared<SharedLibrary>(path);  // freshly compiled: a failure is an error
      opened[path] = lib;
    }
    for (size_t k : unit.kernels) {
      for (const std::string& s : kernels[k].symbols) lib->symbol(s);  // throws if missing
      libs[k] = lib;
      write_file_atomic(cache_dir_ + "/" + kernel_key(prelude, kernels[k]) + ".idx",
                        unit.name + "\n");
    }
  }
  return libs;
}

}  // namespace luminal::cpu
