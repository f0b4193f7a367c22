#pragma once
// A summary of a weight file for `luminal info PATH`: format, architecture,
// tensor count, a histogram of tensor types, sizes and the metadata keys.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "luminal/io/stored_tensor.hpp"

namespace luminal {

struct WeightSummary {
  std::string path;
  std::string format;        // "GGUF v3", "safetensors"
  std::string architecture;  // "" when the file does not say
  size_t tensor_count = 0;
  int64_t parameter_count = 0;  // elements over all tensors
  uint64_t tensor_bytes = 0;    // bytes of tensor data
  uint64_t file_bytes = 0;
  struct TypeStats {
    size_t tensors = 0;
    int64_t elements = 0;
    uint64_t bytes = 0;
  };
  std::map<std::string, TypeStats> types;                     // by the file's type name
  std::vector<std::pair<std::string, std::string>> metadata;  // key, printable value
};

WeightSummary summarize(const WeightSource& weights);
/// Multi-line human-readable text (metadata values cut to `max_value_chars`).
std::string to_text(const WeightSummary& summary, size_t max_value_chars = 80);

}  // namespace luminal
