#pragma once
// A text serialisation of HLIR graphs, used by the compile cache to store the
// chosen program. One line per node, tokens separated by spaces:
//
//     <kind> <dtype> <shape> <operand count> (<producer id> <view>)* <payload>
//
// with shapes as `<rank> <expr>*`, views as `<rank> <size expr>* <axis expr>*`,
// strings hex-encoded, doubles as the hex of their bits (exact, -0.0 and NaN
// payloads included) and expressions in prefix form: `#<int>` a constant,
// `$<name>` a variable, `(<ExprKind number>` followed by the two children
// (built back with Expr::make, unsimplified, so the tree is identical).
// Deserialisation rebuilds the graph through the Graph API, so every node is
// validated again; any malformed input throws luminal::Error.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "luminal/core/graph.hpp"

namespace luminal::compiler {

std::string serialize_graph(const Graph& graph);
/// Throws luminal::Error on malformed or inconsistent text.
std::unique_ptr<Graph> deserialize_graph(std::string_view text);

/// 64-bit FNV-1a (a stable hash for cache keys and checksums).
uint64_t fnv1a64(std::string_view bytes, uint64_t seed = 0xcbf29ce484222325ULL);
/// A fast stable 64-bit hash of bytes (eight at a time; not FNV-compatible),
/// for cache keys and checksums of large texts.
uint64_t hash64(std::string_view bytes, uint64_t seed = 0);
/// 16 lower-case hex digits.
std::string hex64(uint64_t value);

}  // namespace luminal::compiler
