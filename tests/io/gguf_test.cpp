#include "luminal/io/gguf.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "io/io_test_util.hpp"
#include "luminal/core/float_convert.hpp"
#include "luminal/error.hpp"
#include "luminal/io/format_error.hpp"
#include "luminal/io/gguf_writer.hpp"

namespace luminal {
namespace {

using io_test::Bytes;
using io_test::error_of;
using VT = GGUFValueType;

GGUFFile parse(const std::vector<std::byte>& bytes) {
  return GGUFFile::from_memory(bytes, "test.gguf");
}

std::vector<std::byte> iota_bytes(size_t n, int start = 0) {
  std::vector<std::byte> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<std::byte>((start + i * 7) & 0xFF);
  return out;
}

TEST(GGUF, MetadataOfEveryValueType) {
  GGUFWriter w;
  w.add_u8("u8", 255);
  w.add_i8("i8", -128);
  w.add_u16("u16", 65535);
  w.add_i16("i16", -32768);
  w.add_u32("u32", 4294967295u);
  w.add_i32("i32", std::numeric_limits<int32_t>::min());
  w.add_u64("u64", std::numeric_limits<uint64_t>::max());
  w.add_i64("i64", std::numeric_limits<int64_t>::min());
  w.add_f32("f32", 0.1f);
  w.add_f64("f64", -1e300);
  w.add_bool("yes", true);
  w.add_bool("no", false);
  w.add_string("s", "h\xc3\xa9llo \xf0\x9f\x98\x80");  // UTF-8 passes through untouched
  w.add_string("empty", "");
  w.add_int_array("a.u8", VT::U8, {0, 1, 255});
  w.add_int_array("a.i64", VT::I64, {-5, 0, 7});
  w.add_int_array("a.bool", VT::Bool, {1, 0});
  w.add_int_array("a.none", VT::U32, {});
  w.add_float_array("a.f32", VT::F32, {1.5, -0.25});
  w.add_float_array("a.f64", VT::F64, {0.1});
  w.add_string_array("a.str", {"x", "", "y z"});
  w.add_encoded("a.nested", VT::Array,
                GGUFWriter::encode_array_of_arrays({GGUFWriter::encode_int_array(VT::I16, {1, -2}),
                                                    GGUFWriter::encode_string_array({"q"}),
                                                    GGUFWriter::encode_int_array(VT::U8, {})}));
  const auto bytes = w.to_bytes();
  const GGUFFile f = parse(bytes);

  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.metadata().size(), 22u);
  EXPECT_EQ(f.metadata()[0].first, "u8");  // file order
  EXPECT_EQ(f.value("u8").type(), VT::U8);
  EXPECT_EQ(f.get_uint("u8"), 255u);
  EXPECT_EQ(f.get_int("i8"), -128);
  EXPECT_EQ(f.get_uint("u16"), 65535u);
  EXPECT_EQ(f.get_int("i16"), -32768);
  EXPECT_EQ(f.get_uint("u32"), 4294967295u);
  EXPECT_EQ(f.get_int("i32"), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(f.get_uint("u64"), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(f.get_int("i64"), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(f.get_float("f32"), static_cast<double>(0.1f));
  EXPECT_EQ(f.get_float("f64"), -1e300);
  EXPECT_EQ(f.get_float("u32"), 4294967295.0);  // integers widen to numbers
  EXPECT_TRUE(f.get_bool("yes"));
  EXPECT_FALSE(f.get_bool("no"));
  EXPECT_EQ(f.get_string("s"), "h\xc3\xa9llo \xf0\x9f\x98\x80");
  EXPECT_EQ(f.get_string("empty"), "");
  EXPECT_EQ(f.get_ints("a.u8"), (std::vector<int64_t>{0, 1, 255}));
  EXPECT_EQ(f.get_ints("a.i64"), (std::vector<int64_t>{-5, 0, 7}));
  EXPECT_EQ(f.get_ints("a.bool"), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(f.value("a.none").size(), 0u);
  EXPECT_EQ(f.value("a.none").element_type(), VT::U32);
  EXPECT_EQ(f.get_floats("a.f32"), (std::vector<double>{1.5, -0.25}));
  EXPECT_EQ(f.get_floats("a.f64"), (std::vector<double>{0.1}));
  EXPECT_EQ(f.get_strings("a.str"), (std::vector<std::string>{"x", "", "y z"}));
  const GGUFValue& nested = f.value("a.nested");
  ASSERT_EQ(nested.element_type(), VT::Array);
  ASSERT_EQ(nested.arrays().size(), 3u);
  EXPECT_EQ(nested.arrays()[0].element_type(), VT::I16);
  EXPECT_EQ(nested.arrays()[0].ints(), (std::vector<int64_t>{1, -2}));
  EXPECT_EQ(nested.at(1).strings()[0], "q");
  EXPECT_EQ(nested.at(2).size(), 0u);
  // Printable forms (used by `luminal info`).
  EXPECT_EQ(f.value("i8").to_string(), "-128");
  EXPECT_EQ(f.value("f32").to_string(), "0.1");
  EXPECT_EQ(f.value("yes").to_string(), "true");
  EXPECT_EQ(f.value("a.str").to_string(), "[\"x\", \"\", \"y z\"]");
  EXPECT_EQ(f.value("a.u8").to_string(2), "[0, 1, ... (3 items)]");
  EXPECT_EQ(f.value("a.nested").to_string(), "[[1, -2], [\"q\"], []]");
  EXPECT_EQ(f.architecture(), "");
}

TEST(GGUF, TypedLookupsNameFileKeyAndTypes) {
  GGUFWriter w;
  w.add_string("general.architecture", "llama");
  w.add_i8("neg", -3);
  w.add_u64("big", std::numeric_limits<uint64_t>::max());
  const auto bytes = w.to_bytes();
  const GGUFFile f = parse(bytes);
  EXPECT_EQ(f.architecture(), "llama");
  std::string msg = error_of([&] { f.get_uint("general.architecture"); });
  EXPECT_NE(msg.find("test.gguf"), std::string::npos) << msg;
  EXPECT_NE(msg.find("general.architecture"), std::string::npos) << msg;
  EXPECT_NE(msg.find("string"), std::string::npos) << msg;
  EXPECT_THROW(f.get_uint("general.architecture"), DTypeError);
  EXPECT_THROW(f.get_uint("neg"), DTypeError);
  EXPECT_EQ(f.get_int("neg"), -3);
  EXPECT_THROW(f.get_int("big"), DTypeError);
  EXPECT_THROW(f.get_strings("neg"), DTypeError);
  EXPECT_THROW(f.value("neg").size(), DTypeError);
  msg = error_of([&] { f.get_uint("llama.block_count"); });
  EXPECT_NE(msg.find("llama.block_count"), std::string::npos) << msg;
  EXPECT_THROW(f.get_uint("llama.block_count"), LookupError);
  EXPECT_FALSE(f.has("llama.block_count"));
  EXPECT_EQ(f.find_value("llama.block_count"), nullptr);
  EXPECT_THROW(f.value("neg").at(0), DTypeError);
}

TEST(GGUF, TensorDirectoryShapesAreReversedNe) {
  GGUFWriter w(2);
  const auto a = iota_bytes(2 * 3 * 4 * 4);
  const auto b = iota_bytes(5 * 2, 1);
  w.add_tensor("a", GGMLType::F32, {2, 3, 4}, a);
  w.add_tensor("b", GGMLType::F16, {5}, iota_bytes(5 * 2, 1));
  w.add_tensor("scalar", GGMLType::F32, {}, iota_bytes(4, 9));
  const auto bytes = w.to_bytes();
  const GGUFFile f = parse(bytes);
  EXPECT_EQ(f.version(), 2u);
  EXPECT_EQ(f.format(), "GGUF v2");
  EXPECT_EQ(f.alignment(), 32u);
  EXPECT_EQ(f.data_offset() % 32, 0u);
  ASSERT_EQ(f.tensors().size(), 3u);
  const StoredTensor& ta = f.tensor("a");
  EXPECT_EQ(ta.shape, (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(ta.ggml_ne(), (std::vector<int64_t>{4, 3, 2}));
  EXPECT_EQ(ta.type_name, "F32");
  EXPECT_EQ(ta.dtype, DType::F32);
  EXPECT_EQ(ta.ggml_type, GGMLType::F32);
  EXPECT_EQ(ta.offset, f.data_offset());
  EXPECT_EQ(ta.numel(), 24);
  EXPECT_EQ(ta.describe(), "F32[2, 3, 4]");
  // The span points into the caller's buffer: no copy.
  EXPECT_EQ(ta.data.data(), bytes.data() + ta.offset);
  EXPECT_TRUE(std::equal(ta.data.begin(), ta.data.end(), a.begin(), a.end()));
  const StoredTensor& tb = f.tensor("b");
  EXPECT_EQ(tb.offset, f.data_offset() + 96);  // 96 bytes of "a", already aligned
  EXPECT_TRUE(std::equal(tb.data.begin(), tb.data.end(), b.begin(), b.end()));
  EXPECT_EQ(f.tensor("scalar").shape, std::vector<int64_t>{});
  EXPECT_EQ(f.find("nope"), nullptr);
  const std::string msg = error_of([&] { f.tensor("nope"); });
  EXPECT_NE(msg.find("test.gguf"), std::string::npos);
  EXPECT_NE(msg.find("nope"), std::string::npos);
}

TEST(GGUF, CustomAlignmentPadsTheDataSection) {
  GGUFWriter w;
  w.set_alignment(256);
  w.add_tensor("x", GGMLType::I8, {3}, iota_bytes(3));
  w.add_tensor("y", GGMLType::I8, {2}, iota_bytes(2));
  const auto bytes = w.to_bytes();
  const GGUFFile f = parse(bytes);
  EXPECT_EQ(f.alignment(), 256u);
  EXPECT_EQ(f.data_offset(), 256u);
  EXPECT_EQ(f.tensor("y").offset, 512u);
  EXPECT_EQ(to_tensor_data(f.tensor("y")).to_ints(), (std::vector<int64_t>{0, 7}));
}

TEST(GGUF, QuantizedTensorsStayQuantizedInTensorData) {
  // A Q4_1 [2, 64] tensor: 2 rows x 2 blocks of 20 bytes.
  Bytes blocks;
  for (int blk = 0; blk < 4; ++blk) {
    blocks.u16(float_to_f16_bits(0.5f * (blk + 1))).u16(float_to_f16_bits(-1.0f));
    for (int j = 0; j < 16; ++j) blocks.u8(static_cast<uint8_t>(blk * 16 + j));
  }
  GGUFWriter w;
  w.add_tensor("w", GGMLType::Q4_1, {2, 64}, blocks.b);
  w.add_tensor("k", GGMLType::Q4_K, {1, 256}, iota_bytes(144));
  const auto bytes = w.to_bytes();
  const GGUFFile f = parse(bytes);
  const TensorData raw = to_tensor_data(f.tensor("w"));
  EXPECT_EQ(raw.dtype(), DType::Q4_1);
  EXPECT_EQ(raw.shape(), (std::vector<int64_t>{2, 64}));
  ASSERT_EQ(raw.nbytes(), 80u);
  EXPECT_EQ(std::memcmp(raw.data(), blocks.b.data(), 80), 0);
  const TensorData deq = dequantize_to_f32(f.tensor("w"));
  EXPECT_EQ(deq.dtype(), DType::F32);
  EXPECT_EQ(deq.shape(), (std::vector<int64_t>{2, 64}));
  // Block 1 (elements 32..63 of row 0): d = 1.0, m = -1, byte j = 16 + j.
  EXPECT_EQ(deq.get(32 + 3), (16 + 3) % 16 * 1.0 - 1.0);
  EXPECT_EQ(deq.get(32 + 16 + 3), (16 + 3) / 16 * 1.0 - 1.0);
  // Q4_K has no luminal dtype: raw storage is refused, f32 works.
  const std::string msg = error_of([&] { to_tensor_data(f.tensor("k")); });
  EXPECT_NE(msg.find("'k'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Q4_K"), std::string::npos) << msg;
  EXPECT_EQ(dequantize_to_f32(f.tensor("k")).numel(), 256);
}

TEST(GGUF, OpensFilesByPath) {
  io_test::TempDir dir;
  GGUFWriter w;
  w.add_string("general.architecture", "tiny");
  w.add_tensor("t", GGMLType::F32, {2}, iota_bytes(8));
  w.write(dir.file("m.gguf"));
  GGUFFile f = GGUFFile::open(dir.file("m.gguf"));
  EXPECT_EQ(f.path(), dir.file("m.gguf"));
  EXPECT_EQ(f.architecture(), "tiny");
  EXPECT_EQ(f.file_size(), w.to_bytes().size());
  // Moving the reader keeps the views valid (they point into the mapping).
  GGUFFile moved = std::move(f);
  EXPECT_EQ(moved.get_string("general.architecture"), "tiny");
  EXPECT_EQ(to_tensor_data(moved.tensor("t")).nbytes(), 8u);
  const std::string msg = error_of([&] { GGUFFile::open(dir.file("missing.gguf")); });
  EXPECT_NE(msg.find("missing.gguf"), std::string::npos) << msg;
  EXPECT_THROW(GGUFFile::open(dir.file("missing.gguf")), FormatError);
}

// The directory and metadata of a file written by gguf.GGUFWriter, as
// gguf.GGUFReader reports them.
TEST(GGUF, ReadsWhatGgufPythonWrites) {
  io_test::TempDir dir;
  ASSERT_EQ(io_test::run_oracle({"gguf-fixture", dir.file("f.gguf"), dir.file("f.json")}), "");
  const auto oracle = io_test::read_json(dir.file("f.json"));
  const GGUFFile f = GGUFFile::open(dir.file("f.gguf"));
  EXPECT_EQ(f.version(), oracle["version"].get<uint32_t>());
  EXPECT_EQ(f.alignment(), 64u);
  EXPECT_EQ(f.data_offset(), oracle["data_offset"].get<uint64_t>());
  ASSERT_EQ(f.tensors().size(), oracle["tensors"].size());
  for (size_t i = 0; i < f.tensors().size(); ++i) {
    const StoredTensor& t = f.tensors()[i];
    const auto& o = oracle["tensors"][i];
    SCOPED_TRACE(t.name);
    EXPECT_EQ(t.name, o["name"].get<std::string>());
    EXPECT_EQ(t.ggml_ne(), o["ne"].get<std::vector<int64_t>>());
    EXPECT_EQ(t.type_name, o["type"].get<std::string>());
    EXPECT_EQ(t.offset, o["offset"].get<uint64_t>());
    EXPECT_EQ(t.data.size(), o["nbytes"].get<size_t>());
  }
  EXPECT_EQ(f.tensor("p.F32").shape, (std::vector<int64_t>{1, 2, 3, 4}));
  // Metadata: every key gguf-py saw, with its type and value.
  ASSERT_EQ(f.metadata().size(), oracle["metadata"].size());
  EXPECT_EQ(f.architecture(), "fixture");
  EXPECT_EQ(f.get_uint("t.u8"), 200u);
  EXPECT_EQ(f.get_int("t.i8"), -100);
  EXPECT_EQ(f.get_uint("t.u16"), 60000u);
  EXPECT_EQ(f.get_int("t.i16"), -30000);
  EXPECT_EQ(f.get_uint("t.u32"), 4000000000u);
  EXPECT_EQ(f.get_int("t.i32"), -2000000000);
  EXPECT_EQ(std::bit_cast<uint32_t>(static_cast<float>(f.get_float("t.f32"))),
            oracle["metadata"]["t.f32"]["f32_bits"].get<uint32_t>());
  EXPECT_EQ(f.get_uint("t.u64"), oracle["metadata"]["t.u64"]["value"].get<uint64_t>());
  EXPECT_EQ(f.get_int("t.i64"), oracle["metadata"]["t.i64"]["value"].get<int64_t>());
  EXPECT_EQ(f.get_float("t.f64"), oracle["metadata"]["t.f64"]["value"].get<double>());
  EXPECT_TRUE(f.get_bool("t.bool"));
  EXPECT_FALSE(f.get_bool("t.false"));
  EXPECT_EQ(f.get_string("t.string"), oracle["metadata"]["t.string"]["value"].get<std::string>());
  EXPECT_EQ(f.get_ints("t.arr_u8"), (std::vector<int64_t>{0, 7, 255}));
  EXPECT_EQ(f.value("t.arr_i16").element_type(), VT::I16);
  EXPECT_EQ(f.get_ints("t.arr_i16"), (std::vector<int64_t>{-32768, 0, 32767}));
  EXPECT_EQ(f.value("t.arr_u64").at(1).as_uint(), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(f.get_floats("t.arr_f32"),
            (std::vector<double>{1.5, -0.25, static_cast<double>(3.0e38f)}));
  EXPECT_EQ(f.get_floats("t.arr_f64"), (std::vector<double>{0.1, -1e300}));
  EXPECT_EQ(f.get_ints("t.arr_bool"), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(f.get_strings("t.arr_str"),
            oracle["metadata"]["t.arr_str"]["value"].get<std::vector<std::string>>());
  const GGUFValue& nested = f.value("t.nested");
  ASSERT_EQ(nested.arrays().size(), 2u);
  EXPECT_EQ(nested.arrays()[0].ints(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(nested.arrays()[1].ints(), (std::vector<int64_t>{3}));
  for (const auto& [key, value] : f.metadata()) {
    const auto& types = oracle["metadata"][std::string(key)]["types"];
    EXPECT_EQ(types[0].get<std::string>() == "ARRAY", value.is_array()) << key;
  }
}

// ---- malformed files ------------------------------------------------------------

Bytes header(uint32_t version, uint64_t tensors, uint64_t kvs) {
  Bytes b;
  b.raw("GGUF").u32(version).u64(tensors).u64(kvs);
  return b;
}

// Tensor info: name, dims (ggml order), type, offset.
Bytes& tensor_info(Bytes& b, std::string_view name, const std::vector<uint64_t>& ne, uint32_t type,
                   uint64_t offset) {
  b.str(name).u32(static_cast<uint32_t>(ne.size()));
  for (uint64_t d : ne) b.u64(d);
  return b.u32(type).u64(offset);
}

void expect_malformed(const Bytes& b, const std::string& problem) {
  io_test::expect_format_error(parse, b, "test.gguf: GGUF: ", problem);
}

TEST(GGUFMalformed, HeaderProblems) {
  expect_malformed(Bytes{}, "too short for the magic");
  expect_malformed(Bytes{}.raw("GGU"), "too short");
  expect_malformed(Bytes{}.raw("GGML").u32(3).u64(0).u64(0), "bad magic 0x4c4d4747");
  expect_malformed(header(1, 0, 0), "version 1");
  expect_malformed(header(0x03000000, 0, 0), "big-endian");
  expect_malformed(header(7, 0, 0), "unsupported GGUF version 7");
  expect_malformed(Bytes{}.raw("GGUF").u32(3).u32(0), "truncated: the tensor count");
  expect_malformed(header(3, uint64_t{1} << 60, 0), "absurd tensor count 1152921504606846976");
  expect_malformed(header(3, 0, uint64_t{1} << 40), "absurd metadata count");
}

TEST(GGUFMalformed, MetadataProblems) {
  Bytes b = header(3, 0, 1);
  expect_malformed(b.u64(uint64_t{1} << 62).zeros(8), "absurd length 4611686018427387904");
  b = header(3, 0, 1);
  expect_malformed(b.str("k").u32(13).u8(0), "metadata 'k' value type is 13");
  b = header(3, 0, 1);
  expect_malformed(b.str("k").u32(9).u32(4).u64(uint64_t{1} << 61), "absurd element count");
  b = header(3, 0, 1);
  expect_malformed(b.str("k").u32(9).u32(99).u64(0), "element type is 99");
  b = header(3, 0, 1);
  expect_malformed(b.str("k").u32(9).u32(8).u64(1).u64(5).raw("a"),
                   "absurd length 5 of metadata 'k' element");
  b = header(3, 0, 1);
  expect_malformed(b.str("k").u32(4).u16(0), "truncated: metadata 'k'");
  b = header(3, 0, 1);
  b.str("deep").u32(9);
  for (int i = 0; i < 20; ++i) b.u32(9).u64(1);
  expect_malformed(b.u32(0).u64(0), "nested more than 16 deep");
  b = header(3, 0, 2);
  expect_malformed(b.str("k").u32(0).u8(1).str("k").u32(0).u8(2), "duplicate metadata key 'k'");
  b = header(3, 0, 1);
  expect_malformed(b.str("general.alignment").u32(10).u64(32), "general.alignment must be a u32");
  b = header(3, 0, 1);
  expect_malformed(b.str("general.alignment").u32(4).u32(48), "48 is not a power of two");
  b = header(3, 0, 1);
  expect_malformed(b.str("general.alignment").u32(4).u32(0), "0 is not a power of two");
}

TEST(GGUFMalformed, TensorDirectoryProblems) {
  auto one = [](std::vector<uint64_t> ne, uint32_t type, uint64_t offset, size_t data) {
    Bytes b = header(3, 1, 0);
    tensor_info(b, "t", ne, type, offset).pad_to(32).zeros(data);
    return b;
  };
  expect_malformed(one({1, 1, 1, 1, 1}, 0, 0, 4), "tensor 't' has 5 dimensions (at most 4)");
  expect_malformed(one({4}, 4, 0, 64), "tensor 't' has unknown ggml type 4");
  expect_malformed(one({4}, 1000, 0, 64), "unknown ggml type 1000");
  expect_malformed(one({33}, 2, 0, 64), "row of 33 elements, not a multiple of its block size 32");
  expect_malformed(one({}, 2, 0, 64), "scalar of block type Q4_0");
  expect_malformed(one({4}, 0, 8, 64), "offset 8 is not a multiple of the alignment 32");
  expect_malformed(one({4}, 0, 0, 8), "tensor 't' data (16 bytes at data offset 0");
  expect_malformed(one({4}, 0, 0, 8), "is outside the file");
  expect_malformed(one({4}, 0, uint64_t{1} << 63, 64), "is outside the file");
  expect_malformed(one({uint64_t{1} << 40, uint64_t{1} << 40}, 0, 0, 64), "too many elements");
  expect_malformed(one({uint64_t{1} << 63}, 0, 0, 64), "too many elements");
  // The product of the non-zero dims must fit even when a zero dim makes the
  // tensor empty: consumers multiply dims in their own order.
  expect_malformed(one({0, uint64_t{1} << 62, uint64_t{1} << 62}, 0, 0, 0), "too many elements");
  Bytes zero = one({0, uint64_t{1} << 31, uint64_t{1} << 31}, 0, 0, 0);
  EXPECT_EQ(to_tensor_data(parse(zero.b).tensor("t")).numel(), 0);
  // A tensor of 2^62 f32 elements would need 2^64 bytes.
  expect_malformed(one({uint64_t{1} << 62}, 0, 0, 64), "tensor 't' is too large");
  Bytes b = header(3, 1, 0);
  expect_malformed(b.str("t").u32(4).u64(4).u64(1).u64(1), "truncated: tensor 't' dimension");

  Bytes overlap = header(3, 2, 0);
  tensor_info(overlap, "a", {16}, 0, 0);
  tensor_info(overlap, "b", {8}, 0, 32);
  overlap.pad_to(32).zeros(64);
  expect_malformed(overlap, "tensors 'a' and 'b' overlap");
  // An empty tensor where another starts is fine (ggml writes them so).
  Bytes empty = header(3, 2, 0);
  tensor_info(empty, "a", {8}, 0, 0);
  tensor_info(empty, "e", {0, 4}, 0, 0);
  empty.pad_to(32).zeros(32);
  EXPECT_EQ(parse(empty.b).tensor("e").numel(), 0);
  Bytes dup = header(3, 2, 0);
  tensor_info(dup, "a", {8}, 0, 0);
  tensor_info(dup, "a", {8}, 0, 32);
  dup.pad_to(32).zeros(64);
  expect_malformed(dup, "duplicate tensor name 'a'");
}

// Every truncation of a valid file that cuts into its tensor data or
// directory is an error, never a crash or a short read.
TEST(GGUFMalformed, EveryTruncationIsAnError) {
  GGUFWriter w;
  w.add_string("general.architecture", "llama");
  w.add_string_array("tokens", {"a", "bc"});
  w.add_encoded("nested", VT::Array,
                GGUFWriter::encode_array_of_arrays({GGUFWriter::encode_int_array(VT::I32, {1})}));
  w.add_tensor("w", GGMLType::Q8_0, {2, 32}, iota_bytes(68));
  w.add_tensor("v", GGMLType::F16, {3}, iota_bytes(6));
  const auto full = w.to_bytes();
  const GGUFFile f = parse(full);
  const size_t data_end = f.tensor("v").offset + 6;
  for (size_t n = 0; n < data_end; ++n) {
    const std::vector<std::byte> cut(full.begin(), full.begin() + static_cast<ptrdiff_t>(n));
    EXPECT_THROW(parse(cut), FormatError) << "length " << n;
  }
  for (size_t n = data_end; n <= full.size(); ++n) {
    const std::vector<std::byte> cut(full.begin(), full.begin() + static_cast<ptrdiff_t>(n));
    EXPECT_NO_THROW(parse(cut)) << "length " << n;  // only padding is missing
  }
}

// Random corruptions either parse or throw FormatError; what parses can be
// read in full (a miniature of the libFuzzer target, run in every build).
TEST(GGUFMalformed, RandomCorruptionsFailCleanly) {
  GGUFWriter w;
  w.add_u32("general.alignment", 32);
  w.add_string("general.architecture", "llama");
  w.add_float_array("scores", VT::F32, {1, 2, 3});
  w.add_tensor("q", GGMLType::Q4_0, {1, 32}, iota_bytes(18));
  w.add_tensor("k", GGMLType::Q6_K, {1, 256}, iota_bytes(210));
  w.add_tensor("f", GGMLType::BF16, {2, 2}, iota_bytes(8));
  const auto valid = w.to_bytes();
  std::mt19937 rng(7);
  int parsed = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    auto bytes = valid;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t pos = rng() % bytes.size();
      switch (rng() % 3) {
        case 0:
          bytes[pos] = static_cast<std::byte>(rng() & 0xFF);
          break;
        case 1:
          bytes[pos] ^= static_cast<std::byte>(1u << (rng() % 8));
          break;
        default:
          bytes.resize(pos);
          break;
      }
      if (bytes.empty()) break;
    }
    try {
      const GGUFFile f = parse(bytes);
      ++parsed;
      for (const StoredTensor& t : f.tensors()) {
        if (t.ggml_type && ggml_type_info(*t.ggml_type).dequantizable && t.numel() < (1 << 16)) {
          dequantize_to_f32(t);
        }
      }
      for (const auto& kv : f.metadata()) kv.second.to_string();
    } catch (const FormatError&) {
    }
  }
  EXPECT_GT(parsed, 100);  // many corruptions hit data bytes, which stay valid
}

}  // namespace
}  // namespace luminal
