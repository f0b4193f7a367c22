#pragma once
// The on-disk compile cache (SPEC section 6): a second compile of the same
// model, in any process, skips saturation and search.
//
// Key: a 128-bit hash of the serialised graph (structure, input names,
// dtypes, shapes, payloads, views), the backend's name and device, and the
// options that change the result (search budget, seed, profiling dims,
// search parameters, saturation budget). Value: a file `<key>.lmc` in the
// cache directory:
//
//     LUMINALC <format version> <key> <payload bytes> <payload checksum>\n
//     <payload: a stats line, then serialize_graph() of the winner>
//
// Writes are atomic (temporary file + rename). An entry with a bad magic,
// version, key, size or checksum, or one that does not deserialise, is
// ignored with a log line on stderr, and the model is compiled normally
// (and the entry rewritten).

#include <memory>
#include <optional>
#include <string>

#include "luminal/compiler/compile.hpp"

namespace luminal::compiler {

// 2: stats carry block kinds/instances; 3: kernel groups; 4: hash64 checksums.
inline constexpr int kCacheFormatVersion = 4;

/// The cache directory for these options (created on store).
std::string cache_directory(const CompileOptions& options);
/// The hex cache key.
std::string cache_key(const Graph& graph, const Backend& backend, const CompileOptions& options);

struct CacheEntry {
  std::shared_ptr<const Graph> graph;  // the chosen program's HLIR
  CompileStats stats;                  // of the cold compile
};

/// The entry for `key`, or nullopt (missing, corrupt or stale; logged).
std::optional<CacheEntry> cache_load(const std::string& dir, const std::string& key);
/// Store atomically; failures are logged and otherwise ignored.
void cache_store(const std::string& dir, const std::string& key, const Graph& chosen,
                 const CompileStats& stats);

}  // namespace luminal::compiler
