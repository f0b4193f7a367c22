#include "luminal/io/weight_binding.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "io/io_test_util.hpp"
#include "luminal/core/float_convert.hpp"
#include "luminal/core/tensor.hpp"
#include "luminal/error.hpp"
#include "luminal/io/gguf.hpp"
#include "luminal/io/gguf_writer.hpp"
#include "luminal/io/safetensors.hpp"
#include "luminal/reference/interpreter.hpp"

namespace luminal {
namespace {

using io_test::error_of;

TensorData values(DType dtype, std::vector<int64_t> shape, double start) {
  TensorData t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, start + 0.5 * static_cast<double>(i));
  return t;
}

struct File {
  std::vector<std::pair<std::string, TensorData>> tensors;
  std::vector<std::byte> bytes;
  SafetensorsFile open() {
    std::vector<std::pair<std::string, const TensorData*>> refs;
    for (const auto& [n, t] : tensors) refs.emplace_back(n, &t);
    bytes = safetensors_bytes(refs);
    return SafetensorsFile::from_memory(bytes, "weights.safetensors");
  }
};

TEST(WeightBinding, BindsByNameAndReportsMissingAndUnused) {
  Graph g;
  auto w = g.weight("w", {2, 3});
  auto b = g.weight("b", {3}, DType::F16);
  auto x = g.input("x", {"s", 3});
  g.input("n", {"s"});
  g.output("y", x * 2.0);
  (void)w;
  (void)b;
  File file;
  file.tensors.emplace_back("w", values(DType::F32, {2, 3}, 1));
  file.tensors.emplace_back("b", values(DType::F16, {3}, -1));
  file.tensors.emplace_back("x", values(DType::F32, {5, 3}, 0));
  file.tensors.emplace_back("extra", values(DType::F32, {1}, 0));
  const SafetensorsFile f = file.open();
  const BoundWeights bound = bind_weights(g, f);
  ASSERT_EQ(bound.tensors.size(), 3u);
  EXPECT_EQ(bound.tensors[0].first, "w");  // graph input order
  EXPECT_EQ(bound.tensors[1].first, "b");
  EXPECT_EQ(bound.tensors[2].first, "x");
  EXPECT_EQ(bound.tensors[0].second.to_doubles(), file.tensors[0].second.to_doubles());
  EXPECT_EQ(bound.tensors[1].second.dtype(), DType::F16);
  EXPECT_EQ(bound.missing, std::vector<std::string>{"n"});
  EXPECT_EQ(bound.unused, std::vector<std::string>{"extra"});
  EXPECT_EQ(bound.dims.at("s"), 5);
  // The bound tensors run: y = x * 2 on the reference interpreter.
  Interpreter run(g);
  for (auto& [name, data] : bound.tensors) run.set_input(name, data);
  run.set_input("n", TensorData(DType::F32, {5}));
  run.run();
  EXPECT_EQ(run.output("y").get(4), 2 * (0 + 0.5 * 4));
}

TEST(WeightBinding, ShapeMismatchNamesFileTensorExpectedAndActual) {
  Graph g;
  g.weight("w", {2, 3});
  File file;
  file.tensors.emplace_back("w", values(DType::F32, {3, 2}, 0));
  const SafetensorsFile f = file.open();
  const std::string msg = error_of([&] { bind_weights(g, f); });
  EXPECT_NE(msg.find("weights.safetensors"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'w'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("f32[2, 3]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("F32[3, 2]"), std::string::npos) << msg;
  EXPECT_THROW(bind_weights(g, f), ShapeError);

  Graph r;
  r.weight("w", {6});
  EXPECT_NE(error_of([&] { bind_weights(r, f); }).find("rank 1 vs 2"), std::string::npos);
}

TEST(WeightBinding, SymbolicDimsMustAgree) {
  Graph g;
  g.input("a", {"s", 2});
  g.input("b", {"s"});
  g.input("c", {Expr("s") * 2});
  File file;
  file.tensors.emplace_back("a", values(DType::F32, {4, 2}, 0));
  file.tensors.emplace_back("b", values(DType::F32, {4}, 0));
  file.tensors.emplace_back("c", values(DType::F32, {8}, 0));
  BoundWeights ok = bind_weights(g, file.open());
  EXPECT_EQ(ok.dims.at("s"), 4);
  EXPECT_EQ(ok.tensors.size(), 3u);

  file.tensors[2].second = values(DType::F32, {7}, 0);
  const SafetensorsFile f = file.open();
  const std::string msg = error_of([&] { bind_weights(g, f); });
  EXPECT_NE(msg.find("'c'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("dim 0 is 7"), std::string::npos) << msg;
  EXPECT_NE(msg.find("= 8"), std::string::npos) << msg;
}

TEST(WeightBinding, BorrowMappingBindsSameDTypeTensorsWithoutACopy) {
  Graph g;
  g.weight("w", {2, 3});
  g.weight("h", {3}, DType::F16);  // stored as f32: converted, so copied
  File file;
  file.tensors.emplace_back("w", values(DType::F32, {2, 3}, 1));
  file.tensors.emplace_back("h", values(DType::F32, {3}, 2));
  const SafetensorsFile f = file.open();
  BindOptions opts;
  opts.convert_dtypes = true;
  opts.borrow_mapping = true;
  const BoundWeights bound = bind_weights(g, f, opts);
  const TensorData& w = bound.tensors.at(0).second;
  EXPECT_TRUE(w.borrowed());
  EXPECT_EQ(static_cast<const void*>(w.data()), static_cast<const void*>(f.find("w")->data.data()));
  EXPECT_EQ(w.to_doubles(), file.tensors[0].second.to_doubles());
  EXPECT_FALSE(bound.tensors.at(1).second.borrowed());
  EXPECT_EQ(bound.tensors.at(1).second.dtype(), DType::F16);
  // Without the option every tensor is an owned copy.
  opts.borrow_mapping = false;
  EXPECT_FALSE(bind_weights(g, f, opts).tensors.at(0).second.borrowed());
}

TEST(WeightBinding, DTypeMismatchThrowsUnlessConversionIsAsked) {
  Graph g;
  g.weight("w", {3}, DType::F16);
  File file;
  file.tensors.emplace_back("w", TensorData::from_doubles(DType::F32, {3}, {0.1, 65520.0, -2.5}));
  const SafetensorsFile f = file.open();
  const std::string msg = error_of([&] { bind_weights(g, f); });
  EXPECT_NE(msg.find("f16[3]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("F32[3]"), std::string::npos) << msg;
  EXPECT_THROW(bind_weights(g, f), DTypeError);
  BindOptions convert;
  convert.convert_dtypes = true;
  const BoundWeights bound = bind_weights(g, f, convert);
  const TensorData& w = bound.tensors.at(0).second;
  EXPECT_EQ(w.dtype(), DType::F16);
  // Round to nearest even in f16: 0.1f -> 0.0999755859375; 65520 overflows to inf.
  EXPECT_EQ(w.get(0), static_cast<double>(f16_bits_to_float(float_to_f16_bits(0.1f))));
  EXPECT_TRUE(std::isinf(w.get(1)));
  EXPECT_EQ(w.get(2), -2.5);
}

TEST(WeightBinding, RenamesAndBindsGgufQuantizedStorage) {
  std::vector<std::byte> q8(2 * 34);
  for (size_t i = 0; i < q8.size(); ++i) q8[i] = static_cast<std::byte>(i * 5 % 251);
  q8[0] = std::byte{0x00};  // block scales: f16 0.5 (0x3800)
  q8[1] = std::byte{0x38};
  q8[34] = std::byte{0x00};
  q8[35] = std::byte{0x38};
  GGUFWriter w;
  w.add_tensor("blk.0.attn_q.weight", GGMLType::Q8_0, {2, 32}, q8);
  const auto bytes = w.to_bytes();
  const GGUFFile f = GGUFFile::from_memory(bytes, "m.gguf");

  Graph g;
  g.weight("layers.0.q", {2, 32}, DType::Q8_0);
  g.weight("layers.0.q_f32", {2, 32}, DType::F32);
  BindOptions opts;
  opts.tensor_name = [](std::string_view name) {
    return std::string(name.rfind("layers.0.q", 0) == 0 ? "blk.0.attn_q.weight" : name);
  };
  EXPECT_THROW(bind_weights(g, f, opts), DTypeError);  // q_f32 needs conversion
  opts.convert_dtypes = true;
  const BoundWeights bound = bind_weights(g, f, opts);
  ASSERT_EQ(bound.tensors.size(), 2u);
  const TensorData& raw = bound.tensors[0].second;
  EXPECT_EQ(raw.dtype(), DType::Q8_0);  // stays quantized: the blocks, not floats
  ASSERT_EQ(raw.nbytes(), q8.size());
  EXPECT_EQ(std::memcmp(raw.data(), q8.data(), q8.size()), 0);
  const TensorData& deq = bound.tensors[1].second;
  EXPECT_EQ(deq.dtype(), DType::F32);
  // Element 33 = block 1, code byte 34 + 2 + 1 = 37 -> 37 * 5 % 251 = 185 = int8 -71.
  EXPECT_EQ(deq.get(33), -71 * 0.5);
  EXPECT_TRUE(bound.missing.empty());
  EXPECT_TRUE(bound.unused.empty());
  // An error names the graph input behind a renamed tensor.
  Graph bad;
  bad.weight("layers.0.q", {4, 32}, DType::Q8_0);
  const std::string msg = error_of([&] { bind_weights(bad, f, opts); });
  EXPECT_NE(msg.find("m.gguf: tensor 'blk.0.attn_q.weight' (graph input 'layers.0.q')"),
            std::string::npos)
      << msg;
  // Block-quantized targets are never produced by conversion.
  Graph to_q;
  to_q.weight("x", {32}, DType::Q4_0);
  std::vector<std::byte> f32(32 * 4);
  GGUFWriter w2;
  w2.add_tensor("x", GGMLType::F32, {32}, f32);
  const auto bytes2 = w2.to_bytes();
  EXPECT_THROW(bind_weights(to_q, GGUFFile::from_memory(bytes2, "x.gguf"), opts), DTypeError);
}

}  // namespace
}  // namespace luminal
