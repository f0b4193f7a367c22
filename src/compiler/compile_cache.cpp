#include "luminal/compiler/compile_cache.hpp"

#include <unistd.h>

#include <bit>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "luminal/compiler/serialize.hpp"
#include "luminal/egraph/rule_registry.hpp"
#include "luminal/error.hpp"

namespace luminal::compiler {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kMagic = "LUMINALC";

std::string exact(double v) {
  return hex64(std::bit_cast<uint64_t>(v));
}

void warn(const std::string& path, const std::string& why) {
  std::fprintf(stderr, "luminal: ignoring compile cache entry %s: %s\n", path.c_str(), why.c_str());
}

// Stats as one line of space-separated tokens (words never contain spaces).
std::string stats_line(const CompileStats& s) {
  std::ostringstream o;
  o << "stats " << s.egraph_nodes << ' ' << s.egraph_classes << ' ' << s.candidates << ' '
    << s.dropped << ' ' << exact(s.compile_ms) << ' ' << exact(s.best_ms) << ' ' << s.stop_reason
    << ' ' << s.search_stop << ' ' << hex64(s.winner_hash) << ' ' << s.seed << ' ' << s.block_kinds
    << ' ' << s.block_instances << ' ' << s.profile_dims.size();
  for (const auto& [k, v] : s.profile_dims) o << ' ' << k << ' ' << v;
  o << '\n';
  return o.str();
}

CompileStats parse_stats(std::istream& in) {
  CompileStats s;
  std::string word, cms, bms, wh;
  size_t ndims = 0;
  in >> word >> s.egraph_nodes >> s.egraph_classes >> s.candidates >> s.dropped >> cms >> bms >>
      s.stop_reason >> s.search_stop >> wh >> s.seed >> s.block_kinds >> s.block_instances >> ndims;
  if (!in || word != "stats" || ndims > 1024) throw Error("bad stats line");
  for (size_t i = 0; i < ndims; ++i) {
    std::string k;
    int64_t v = 0;
    if (!(in >> k >> v)) throw Error("bad stats dims");
    s.profile_dims[k] = v;
  }
  s.compile_ms = std::bit_cast<double>(std::stoull(cms, nullptr, 16));
  s.best_ms = std::bit_cast<double>(std::stoull(bms, nullptr, 16));
  s.winner_hash = std::stoull(wh, nullptr, 16);
  return s;
}

}  // namespace

std::string cache_directory(const CompileOptions& options) {
  if (!options.cache_dir.empty()) return options.cache_dir;
  if (const char* d = std::getenv("LUMINAL_CACHE_DIR"); d != nullptr && *d != '\0') return d;
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0')
    return (fs::path(h) / ".cache" / "luminal").string();
  return (fs::temp_directory_path() / "luminal-cache").string();
}

std::string cache_key(const Graph& graph, const Backend& backend, const CompileOptions& o) {
  std::ostringstream k;
  k << serialize_graph(graph) << "\nbackend " << backend.name() << "\ndevice " << backend.device()
    << "\ncache-format " << kCacheFormatVersion << "\nsearch " << o.search_iters << ' '
    << o.seed.value_or(default_seed()) << ' ' << exact(o.time_limit_ms) << ' '
    << exact(o.per_candidate_timeout_ms) << ' ' << o.warmup << ' ' << o.trials << ' '
    << o.stagnation << ' ' << o.elite << ' ' << o.verify_all << ' ' << o.fold << ' '
    << exact(o.tolerance) << "\nbudget " << o.budget.max_nodes << ' ' << o.budget.max_memory_bytes
    << ' ' << o.budget.max_iterations << ' ' << exact(o.budget.max_seconds) << ' '
    << o.budget.max_matches_per_rule << "\nmatmul precision " << to_string(o.matmul_precision)
    << "\ndims";
  for (const auto& [name, v] : profile_dims(graph, o)) k << ' ' << name << '=' << v;
  for (const DimMap& extra : o.extra_profile_dims) {
    k << "\nmore dims";
    for (const auto& [name, v] : extra) k << ' ' << name << '=' << v;
  }
  for (const DimMap& confirm : o.confirm_profile_dims) {
    k << "\nconfirm dims";
    for (const auto& [name, v] : confirm) k << ' ' << name << '=' << v;
  }
  // The rules the search would run (the backend's at this precision, on this
  // host): a luminal build or host that offers other alternatives searches
  // again instead of loading choices made without them.
  egraph::RuleRegistry registry(egraph::RuleRegistry::global());
  backend.register_rules(registry, o.matmul_precision);
  for (const std::string& phase : registry.phases()) {
    k << "\nphase " << phase;
    for (const std::string& name : registry.phase_rulesets(phase)) {
      k << "\n  " << name << ':';
      const egraph::Ruleset rules = registry.ruleset(name);  // (a copy: kept alive here)
      for (const egraph::Rule& rule : rules.rules()) k << ' ' << rule.name();
    }
  }
  const std::string text = k.str();
  return hex64(hash64(text)) + hex64(hash64(text, 0x84222325cbf29ce4ULL));
}

std::optional<CacheEntry> cache_load(const std::string& dir, const std::string& key) {
  const fs::path path = fs::path(dir) / (key + ".lmc");
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    warn(path.string(), "cannot open");
    return std::nullopt;
  }
  std::string header;
  std::getline(in, header);
  std::istringstream h(header);
  std::string magic, file_key, checksum;
  int version = 0;
  size_t size = 0;
  h >> magic >> version >> file_key >> size >> checksum;
  if (!h || magic != kMagic) {
    warn(path.string(), "bad magic or header");
    return std::nullopt;
  }
  if (version != kCacheFormatVersion) {
    warn(path.string(), "format version " + std::to_string(version) + ", expected " +
                            std::to_string(kCacheFormatVersion));
    return std::nullopt;
  }
  if (file_key != key) {
    warn(path.string(), "key mismatch");
    return std::nullopt;
  }
  // Read at most the promised size (+1 to notice trailing garbage) in one go;
  // a corrupt header cannot make it allocate more than the file holds.
  const auto file_size = fs::file_size(path, ec);
  if (ec || size > file_size) {
    warn(path.string(), "truncated (header promises " + std::to_string(size) + " bytes)");
    return std::nullopt;
  }
  std::string payload(size + 1, '\0');
  in.read(payload.data(), static_cast<std::streamsize>(payload.size()));
  payload.resize(static_cast<size_t>(in.gcount()));
  if (payload.size() != size) {
    warn(path.string(), "truncated (" + std::to_string(payload.size()) + " of " +
                            std::to_string(size) + " bytes)");
    return std::nullopt;
  }
  if (hex64(hash64(payload)) != checksum) {
    warn(path.string(), "checksum mismatch");
    return std::nullopt;
  }
  try {
    std::istringstream p(payload);
    CacheEntry entry;
    entry.stats = parse_stats(p);
    const auto pos = static_cast<size_t>(p.tellg());
    entry.graph = deserialize_graph(std::string_view(payload).substr(pos));
    return entry;
  } catch (const std::exception& e) {
    warn(path.string(), e.what());
    return std::nullopt;
  }
}

void cache_store(const std::string& dir, const std::string& key, const Graph& chosen,
                 const CompileStats& stats) {
  try {
    fs::create_directories(dir);
    const std::string payload = stats_line(stats) + serialize_graph(chosen);
    const fs::path path = fs::path(dir) / (key + ".lmc");
    std::random_device rd;
    const fs::path tmp =
        fs::path(dir) / (key + ".tmp." + std::to_string(::getpid()) + "." + hex64(rd()));
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out << kMagic << ' ' << kCacheFormatVersion << ' ' << key << ' ' << payload.size() << ' '
          << hex64(hash64(payload)) << '\n'
          << payload;
      out.flush();
      if (!out) throw Error("write failed");
    }
    fs::rename(tmp, path);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "luminal: could not store compile cache entry in %s: %s\n", dir.c_str(),
                 e.what());
  }
}

}  // namespace luminal::compiler
