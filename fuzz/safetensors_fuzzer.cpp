// libFuzzer target: the safetensors reader. Any input must either parse or
// throw a luminal::Error; whatever parses must be readable in full without
// reading outside the input (ASan: the reader works on the buffer in place).

#include <cstddef>
#include <cstdint>
#include <span>

#include "luminal/error.hpp"
#include "luminal/io/safetensors.hpp"
#include "luminal/io/weight_summary.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace luminal;
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  try {
    const SafetensorsFile f = SafetensorsFile::from_memory(bytes, "fuzz.safetensors");
    volatile uint8_t sink = 0;
    for (const StoredTensor& t : f.tensors()) {
      for (std::byte b : t.data) sink = sink ^ static_cast<uint8_t>(b);
      if (t.dtype) {
        (void)to_tensor_data(t);
        (void)dequantize_to_f32(t);
      }
    }
    (void)to_text(summarize(f));
  } catch (const Error&) {
  }
  return 0;
}
