#pragma once
// Helpers shared by the weight-file reader tests: temporary directories,
// running the Python oracle (tests/io/io_oracle.py), locating the real models
// (scripts/fetch_models.sh), and byte-level builders for malformed files.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "luminal/error.hpp"
#include "luminal/io/format_error.hpp"

namespace luminal::io_test {

namespace fs = std::filesystem;

/// The repository root (this file is tests/io/io_test_util.hpp; CMake passes
/// absolute source paths, so __FILE__ is absolute).
inline fs::path repo_root() {
  return fs::path(__FILE__).parent_path().parent_path().parent_path();
}

/// A fresh directory removed at scope exit.
class TempDir {
public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "luminal-io-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }

private:
  fs::path path_;
};

inline std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

inline std::string python() {
  const char* p = std::getenv("PYTHON");
  return p != nullptr && *p != '\0' ? p : "python3";
}

/// Run tests/io/io_oracle.py with `args`; "" on success, else what went wrong.
inline std::string run_oracle(const std::vector<std::string>& args) {
  std::string cmd =
      shell_quote(python()) + " " + shell_quote((repo_root() / "tests/io/io_oracle.py").string());
  for (const auto& a : args) cmd += " " + shell_quote(a);
  const int rc = std::system(cmd.c_str());
  if (rc == 0) return "";
  return "the Python oracle failed (exit status " + std::to_string(rc) + "): " + cmd +
         "\n(it needs the `gguf`, `safetensors` and `numpy` packages: "
         "python3 -m pip install gguf safetensors numpy)";
}

inline nlohmann::json read_json(const std::string& path) {
  std::ifstream f(path);
  return nlohmann::json::parse(f);
}

inline std::vector<std::byte> read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(chars.size());
  if (!chars.empty()) std::memcpy(out.data(), chars.data(), chars.size());
  return out;
}

inline void write_bytes(const std::string& path, const std::vector<std::byte>& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

/// Path of a real model: $env_var if set, else scripts/fetch_models.sh `model`
/// (which downloads it once into the cache). "" when neither works.
inline std::string model_path(const char* env_var, const std::string& model) {
  if (const char* p = std::getenv(env_var); p != nullptr && *p != '\0') return p;
  const std::string cmd =
      "bash " + shell_quote((repo_root() / "scripts/fetch_models.sh").string()) + " " + model;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (pipe == nullptr) return "";
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, pipe) != nullptr) out += buf;
  if (::pclose(pipe) != 0) return "";
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

/// The message of the luminal::Error `fn` throws ("" if it throws none). Any
/// other exception escapes and fails the test.
inline std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

/// Little-endian byte builder for hand-made (often malformed) files.
struct Bytes {
  std::vector<std::byte> b;
  Bytes& uint(uint64_t v, size_t n) {
    for (size_t i = 0; i < n; ++i) b.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xFF));
    return *this;
  }
  Bytes& u8(uint64_t v) { return uint(v, 1); }
  Bytes& u16(uint64_t v) { return uint(v, 2); }
  Bytes& u32(uint64_t v) { return uint(v, 4); }
  Bytes& u64(uint64_t v) { return uint(v, 8); }
  Bytes& raw(std::string_view s) {
    for (char c : s) b.push_back(static_cast<std::byte>(c));
    return *this;
  }
  /// A GGUF string: u64 length + bytes.
  Bytes& str(std::string_view s) { return u64(s.size()).raw(s); }
  Bytes& zeros(size_t n) {
    b.resize(b.size() + n, std::byte{0});
    return *this;
  }
  Bytes& pad_to(size_t alignment) { return zeros((alignment - b.size() % alignment) % alignment); }
};

/// Expect `parse(b.b)` to throw FormatError whose message starts with
/// `prefix` ("file: FORMAT: ") and contains `problem`.
template <typename Parse>
void expect_format_error(Parse parse, const Bytes& b, const std::string& prefix,
                         const std::string& problem) {
  std::string msg;
  try {
    parse(b.b);
    ADD_FAILURE() << "parsed without error; expected: " << problem;
    return;
  } catch (const FormatError& e) {
    msg = e.what();
  }
  EXPECT_EQ(msg.rfind(prefix, 0), 0u) << msg;
  EXPECT_NE(msg.find(problem), std::string::npos) << "message: " << msg;
}

}  // namespace luminal::io_test
