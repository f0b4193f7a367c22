// libFuzzer target: the GGUF reader. Any input must either parse or throw a
// luminal::Error; whatever parses must be readable in full (metadata printed,
// tensor bytes touched, supported types dequantized and copied into host
// tensors) without reading outside the input — ASan checks that, since the
// reader works on the fuzzer's buffer in place.

#include <cstddef>
#include <cstdint>
#include <span>

#include "luminal/error.hpp"
#include "luminal/io/gguf.hpp"
#include "luminal/io/weight_summary.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace luminal;
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  try {
    const GGUFFile f = GGUFFile::from_memory(bytes, "fuzz.gguf");
    for (const auto& [key, value] : f.metadata()) {
      (void)value.to_string();
      if (value.is_array() && value.size() > 0) (void)value.at(value.size() - 1).to_string();
    }
    volatile uint8_t sink = 0;
    for (const StoredTensor& t : f.tensors()) {
      for (std::byte b : t.data) sink = sink ^ static_cast<uint8_t>(b);
      if (t.ggml_type && ggml_type_info(*t.ggml_type).dequantizable) (void)dequantize_to_f32(t);
      if (t.dtype) (void)to_tensor_data(t);
    }
    (void)to_text(summarize(f));
  } catch (const Error&) {
    // A clean rejection (FormatError for the file, DTypeError for types that cannot convert).
  }
  return 0;
}
