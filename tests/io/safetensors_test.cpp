#include "luminal/io/safetensors.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "io/io_test_util.hpp"
#include "luminal/error.hpp"
#include "luminal/io/format_error.hpp"

namespace luminal {
namespace {

using io_test::Bytes;
using io_test::error_of;

SafetensorsFile parse(const std::vector<std::byte>& bytes) {
  return SafetensorsFile::from_memory(bytes, "test.safetensors");
}

TensorData ramp(DType dtype, std::vector<int64_t> shape, double scale = 0.37) {
  TensorData t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, (static_cast<double>(i) - 3) * scale);
  return t;
}

TEST(Safetensors, WriterAndReaderRoundTripEveryDType) {
  std::vector<std::pair<std::string, TensorData>> owned;
  for (DType d : {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I64, DType::I32,
                  DType::I8, DType::U8, DType::Bool, DType::F8E4M3, DType::F8E5M2}) {
    owned.emplace_back("t." + to_string(d), ramp(d, {2, 3}));
  }
  owned.emplace_back("scalar", ramp(DType::F32, {}, 1.5));
  owned.emplace_back("empty", TensorData(DType::F32, {0, 4}));
  std::vector<std::pair<std::string, const TensorData*>> refs;
  for (const auto& [n, t] : owned) refs.emplace_back(n, &t);
  const auto bytes = safetensors_bytes(refs, {{"format", "pt"}, {"note", "\xe2\x9c\x93"}});
  const SafetensorsFile f = parse(bytes);
  EXPECT_EQ(f.format(), "safetensors");
  EXPECT_EQ((8 + f.header_size()) % 8, 0u);  // data starts 8-byte aligned
  EXPECT_EQ(f.metadata().at("note"), "\xe2\x9c\x93");
  EXPECT_EQ(f.metadata().size(), 2u);
  ASSERT_EQ(f.tensors().size(), owned.size());
  for (const auto& [name, t] : owned) {
    SCOPED_TRACE(name);
    const StoredTensor& s = f.tensor(name);
    EXPECT_EQ(s.dtype, t.dtype());
    EXPECT_EQ(s.type_name, safetensors_dtype_name(t.dtype()));
    EXPECT_EQ(s.shape, t.shape());
    const TensorData back = to_tensor_data(s);
    ASSERT_EQ(back.nbytes(), t.nbytes());
    EXPECT_EQ(std::memcmp(back.data(), t.data(), t.nbytes()), 0);
  }
  EXPECT_EQ(safetensors_dtype_name(DType::Bool), "BOOL");
  EXPECT_EQ(safetensors_dtype_name(DType::F8E4M3), "F8_E4M3");
  EXPECT_EQ(f.tensor("t.bf16").data.data(), bytes.data() + f.tensor("t.bf16").offset);
}

TEST(Safetensors, WriterRefusesWhatTheFormatCannotHold) {
  const TensorData q(DType::Q4_0, {32});
  EXPECT_THROW(safetensors_bytes({{"q", &q}}), DTypeError);
  const TensorData a(DType::F32, {1});
  EXPECT_THROW(safetensors_bytes({{"a", &a}, {"a", &a}}), Error);
  EXPECT_THROW(safetensors_bytes({{"__metadata__", &a}}), Error);
  const std::string msg =
      error_of([&] { write_safetensors("/nonexistent-dir/x.safetensors", {}); });
  EXPECT_NE(msg.find("/nonexistent-dir/x.safetensors"), std::string::npos) << msg;
}

// Files written by the `safetensors` Python package (numpy).
TEST(Safetensors, ReadsWhatThePythonPackageWrites) {
  io_test::TempDir dir;
  ASSERT_EQ(
      io_test::run_oracle({"safetensors-fixture", dir.file("f.safetensors"), dir.file("f.json")}),
      "");
  const auto oracle = io_test::read_json(dir.file("f.json"));
  const SafetensorsFile f = SafetensorsFile::open(dir.file("f.safetensors"));
  EXPECT_EQ(f.metadata(), (oracle["metadata"].get<std::map<std::string, std::string>>()));
  ASSERT_EQ(f.tensors().size(), oracle["tensors"].size());
  for (const auto& [name, o] : oracle["tensors"].items()) {
    SCOPED_TRACE(name);
    const StoredTensor& t = f.tensor(name);
    EXPECT_EQ(t.type_name, o["dtype"].get<std::string>());
    EXPECT_EQ(t.shape, o["shape"].get<std::vector<int64_t>>());
    if (t.type_name == "U16") {  // no luminal dtype
      EXPECT_FALSE(t.dtype.has_value());
      EXPECT_THROW(to_tensor_data(t), DTypeError);
      EXPECT_THROW(dequantize_to_f32(t), DTypeError);
      continue;
    }
    const TensorData d = to_tensor_data(t);
    ASSERT_EQ(d.numel(), static_cast<int64_t>(o["values"].size()));
    for (int64_t i = 0; i < d.numel(); ++i) {
      if (is_float(d.dtype())) {
        EXPECT_EQ(d.get(i), o["values"][i].get<double>()) << i;
      } else {
        EXPECT_EQ(d.get_int(i), o["values"][i].get<int64_t>()) << i;
      }
    }
  }
}

// The Python package reads what our writer writes, with the same values.
TEST(Safetensors, ThePythonPackageReadsWhatWeWrite) {
  io_test::TempDir dir;
  const TensorData f32 = ramp(DType::F32, {2, 2});
  const TensorData f16 = ramp(DType::F16, {3});
  const TensorData bf16 = ramp(DType::BF16, {1, 2});
  const TensorData i64 = TensorData::from_ints(DType::I64, {2}, {INT64_MIN, INT64_MAX});
  const TensorData b = TensorData::from_ints(DType::Bool, {3}, {1, 0, 1});
  write_safetensors(dir.file("w.safetensors"),
                    {{"f32", &f32}, {"f16", &f16}, {"bf16", &bf16}, {"i64", &i64}, {"b", &b}},
                    {{"k", "v"}});
  ASSERT_EQ(
      io_test::run_oracle({"safetensors-read", dir.file("w.safetensors"), dir.file("w.json")}), "");
  const auto o = io_test::read_json(dir.file("w.json"));
  EXPECT_EQ(o["metadata"]["k"], "v");
  EXPECT_EQ(o["tensors"]["bf16"]["dtype"], "BF16");
  EXPECT_EQ(o["tensors"]["bf16"]["shape"], (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(o["tensors"]["f32"]["values"].get<std::vector<double>>(), f32.to_doubles());
  EXPECT_EQ(o["tensors"]["f16"]["values"].get<std::vector<double>>(), f16.to_doubles());
  EXPECT_EQ(o["tensors"]["i64"]["values"].get<std::vector<int64_t>>(), i64.to_ints());
  EXPECT_EQ(o["tensors"]["b"]["values"].get<std::vector<int64_t>>(), b.to_ints());
}

// ---- malformed files ------------------------------------------------------------

Bytes file_with(std::string_view header, size_t data_bytes) {
  Bytes b;
  b.u64(header.size()).raw(header).zeros(data_bytes);
  return b;
}

void expect_malformed(const Bytes& b, const std::string& problem) {
  io_test::expect_format_error(parse, b, "test.safetensors: safetensors: ", problem);
}

TEST(SafetensorsMalformed, HeaderProblems) {
  expect_malformed(Bytes{}.raw("abc"), "too short for the header length");
  expect_malformed(Bytes{}.u64(100).raw("{}"), "past the end of the file");
  expect_malformed(Bytes{}.u64(uint64_t{1} << 40).raw("{}"), "over the 100 MB limit");
  expect_malformed(file_with("", 0), "not a JSON object");
  expect_malformed(file_with("[1, 2]", 0), "not a JSON object");
  expect_malformed(file_with("{\"a\": ", 0), "bad JSON header");
  expect_malformed(file_with("{} trailing", 0), "bad JSON header");
  expect_malformed(file_with(R"({"a":{"b":{"c":{"d":{"e":{"f":1}}}}}})", 0), "nested too deep");
  expect_malformed(file_with(R"({"__metadata__": {"k": 1}})", 0), "value of 'k' must be a string");
  expect_malformed(file_with(R"({"__metadata__": []})", 0), "__metadata__ must be an object");
}

TEST(SafetensorsMalformed, TensorEntryProblems) {
  const std::string ok_rest = R"("shape": [2], "data_offsets": [0, 8]}})";
  expect_malformed(file_with(R"({"t": 5})", 0), "tensor 't' must be an object");
  expect_malformed(file_with(R"({"t": {)" + ok_rest, 8), "tensor 't' has no dtype string");
  expect_malformed(file_with(R"({"t": {"dtype": "F7", )" + ok_rest, 8),
                   "tensor 't' has unknown dtype \"F7\"");
  expect_malformed(file_with(R"({"t": {"dtype": "F32", "data_offsets": [0, 8]}})", 8),
                   "has no shape array");
  expect_malformed(
      file_with(R"({"t": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}})", 8),
      "shape entry must be a non-negative integer, got -2");
  expect_malformed(
      file_with(R"({"t": {"dtype": "F32", "shape": [2.5], "data_offsets": [0, 8]}})", 8),
      "non-negative integer");
  expect_malformed(file_with(R"({"t": {"dtype": "F32", "shape": [2], "data_offsets": [0]}})", 8),
                   "needs data_offsets [begin, end]");
  expect_malformed(file_with(R"({"t": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}})", 8),
                   "are outside the data buffer");
  expect_malformed(
      file_with(R"({"t": {"dtype": "F32", "shape": [2], "data_offsets": [0, 16]}})", 8),
      "data_offsets [0, 16] are outside the data buffer (8 bytes)");
  expect_malformed(file_with(R"({"t": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})", 8),
                   "tensor 't' has 8 bytes but F32[3] needs 12");
  expect_malformed(
      file_with(
          R"({"t": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 8]}})",
          8),
      "has too many elements");
  expect_malformed(
      file_with(
          R"({"t": {"dtype": "F64", "shape": [4611686018427387904], "data_offsets": [0, 8]}})", 8),
      "needs more");
  expect_malformed(file_with(R"({"t": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                                 "t": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})",
                             8),
                   "name 't' appears twice");
}

TEST(SafetensorsMalformed, BufferCoverageProblems) {
  expect_malformed(file_with(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                 "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
                             12),
                   "tensors 'a' and 'b' overlap");
  expect_malformed(file_with(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})", 8),
                   "hole of 4 bytes before tensor 'a'");
  expect_malformed(file_with(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})", 8),
                   "4 bytes after the last tensor");
  // An empty tensor may sit on a boundary, even where another tensor starts.
  const Bytes boundary = file_with(R"({"a": {"dtype": "I8", "shape": [2], "data_offsets": [0, 2]},
                                       "b": {"dtype": "I8", "shape": [0], "data_offsets": [0, 0]}})",
                                   2);
  EXPECT_EQ(parse(boundary.b).tensors().size(), 2u);
  expect_malformed(file_with(R"({"a": {"dtype": "I8", "shape": [2], "data_offsets": [0, 2]},
                                 "b": {"dtype": "I8", "shape": [0], "data_offsets": [1, 1]}})",
                             2),
                   "tensors 'a' and 'b' overlap");
  const Bytes ok = file_with(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                                 "z": {"dtype": "F32", "shape": [0], "data_offsets": [4, 4]}})",
                             4);
  EXPECT_EQ(parse(ok.b).tensors().size(), 2u);
  const Bytes zero = file_with(
      R"({"z": {"dtype": "F32", "shape": [2147483648, 2147483648, 0], "data_offsets": [0, 0]}})",
      0);
  EXPECT_EQ(to_tensor_data(parse(zero.b).tensor("z")).numel(), 0);
  expect_malformed(
      file_with(R"({"z": {"dtype": "F32", "shape": [4611686018427387904, 4611686018427387904, 0],
                          "data_offsets": [0, 0]}})",
                0),
      "has too many elements");
}

TEST(SafetensorsMalformed, RandomCorruptionsFailCleanly) {
  const TensorData a = ramp(DType::F32, {2, 2});
  const TensorData b = ramp(DType::BF16, {3});
  const TensorData c = TensorData::from_ints(DType::I64, {1}, {42});
  const auto valid = safetensors_bytes({{"a", &a}, {"b", &b}, {"c", &c}}, {{"m", "x"}});
  std::mt19937 rng(11);
  int parsed = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    auto bytes = valid;
    const size_t pos = rng() % bytes.size();
    if (rng() % 4 == 0) {
      bytes.resize(pos);
    } else {
      bytes[pos] = static_cast<std::byte>(rng() & 0xFF);
    }
    try {
      const SafetensorsFile f = parse(bytes);
      ++parsed;
      for (const StoredTensor& t : f.tensors()) {
        if (t.dtype) to_tensor_data(t);
      }
    } catch (const FormatError&) {
    }
  }
  EXPECT_GT(parsed, 100);
}

}  // namespace
}  // namespace luminal
