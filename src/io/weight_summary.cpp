#include "luminal/io/weight_summary.hpp"

#include <cstdio>
#include <string>

namespace luminal {
namespace {

std::string human_bytes(uint64_t n) {
  char buf[32];
  if (n < 1024) return std::to_string(n) + " B";
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(n);
  int u = -1;
  while (v >= 1024 && u < 3) {
    v /= 1024;
    ++u;
  }
  std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

}  // namespace

WeightSummary summarize(const WeightSource& weights) {
  WeightSummary s;
  s.path = weights.path();
  s.format = weights.format();
  s.architecture = weights.architecture();
  s.tensor_count = weights.tensors().size();
  s.file_bytes = weights.file_size();
  for (const StoredTensor& t : weights.tensors()) {
    const int64_t n = t.numel();
    s.parameter_count += n;
    s.tensor_bytes += t.data.size();
    auto& stats = s.types[t.type_name];
    ++stats.tensors;
    stats.elements += n;
    stats.bytes += t.data.size();
  }
  s.metadata = weights.metadata_text();
  return s;
}

std::string to_text(const WeightSummary& s, size_t max_value_chars) {
  std::string out;
  out += "file:         " + s.path + " (" + human_bytes(s.file_bytes) + ")\n";
  out += "format:       " + s.format + "\n";
  out += "architecture: " + (s.architecture.empty() ? std::string("(not given)") : s.architecture) +
         "\n";
  out += "tensors:      " + std::to_string(s.tensor_count) + ", " +
         std::to_string(s.parameter_count) + " parameters, " + human_bytes(s.tensor_bytes) + "\n";
  out += "types:\n";
  for (const auto& [name, st] : s.types) {
    char line[160];
    std::snprintf(line, sizeof line, "  %-8s %6zu tensors %14lld elements %12s\n", name.c_str(),
                  st.tensors, static_cast<long long>(st.elements), human_bytes(st.bytes).c_str());
    out += line;
  }
  out += "metadata (" + std::to_string(s.metadata.size()) + " keys):\n";
  for (const auto& [key, value] : s.metadata) {
    std::string v = value;
    if (v.size() > max_value_chars) v = v.substr(0, max_value_chars) + "...";
    for (char& c : v) {
      if (c == '\n' || c == '\r' || c == '\t') c = ' ';  // keep one line per key
    }
    out += "  " + key + " = " + v + "\n";
  }
  return out;
}

}  // namespace luminal
