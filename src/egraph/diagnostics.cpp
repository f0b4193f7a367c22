#include "luminal/egraph/diagnostics.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace luminal::egraph {

namespace {

bool flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string_view(v) != "0";
}

}  // namespace

bool log_egraph_enabled() {
  return flag("LUMINAL_LOG_EGRAPH") || flag("LUMINAL_LOG");
}

std::optional<std::string> dump_dir() {
  const char* v = std::getenv("LUMINAL_DUMP_DIR");
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

std::optional<std::string> write_dump(std::string_view stem, std::string_view ext,
                                      const std::string& text) {
  auto dir = dump_dir();
  if (!dir) return std::nullopt;
  static std::atomic<unsigned> counter{0};
  char seq[16];
  std::snprintf(seq, sizeof seq, "%03u", counter.fetch_add(1));
  std::string name(stem);
  for (char& c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) c = '_';
  const std::filesystem::path path =
      std::filesystem::path(*dir) / (std::string(seq) + "-" + name + "." + std::string(ext));
  std::error_code ec;
  std::filesystem::create_directories(*dir, ec);
  std::ofstream out(path);
  out << text;
  if (!out) {
    std::fprintf(stderr, "luminal: cannot write dump %s\n", path.string().c_str());
    return std::nullopt;
  }
  return path.string();
}

}  // namespace luminal::egraph
