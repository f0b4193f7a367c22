#include "luminal/io/weight_summary.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "io/io_test_util.hpp"
#include "luminal/io/format_error.hpp"
#include "luminal/io/gguf.hpp"
#include "luminal/io/gguf_writer.hpp"
#include "luminal/io/safetensors.hpp"

namespace luminal {
namespace {

TEST(WeightSummary, CountsTypesBytesAndMetadata) {
  io_test::TempDir dir;
  GGUFWriter w;
  w.add_string("general.architecture", "llama");
  w.add_u32("llama.block_count", 2);
  w.add_string_array("tokenizer.ggml.tokens", {"a", "b", "c", "d", "e", "f", "g", "h", "i"});
  w.add_string("tokenizer.chat_template", "line one\nline two");
  w.add_tensor("a", GGMLType::Q4_1, {2, 32}, std::vector<std::byte>(40));
  w.add_tensor("b", GGMLType::Q4_1, {1, 64}, std::vector<std::byte>(40));
  w.add_tensor("c", GGMLType::F32, {3}, std::vector<std::byte>(12));
  w.write(dir.file("m.gguf"));
  const auto weights = open_weights(dir.file("m.gguf"));
  const WeightSummary s = summarize(*weights);
  EXPECT_EQ(s.format, "GGUF v3");
  EXPECT_EQ(s.architecture, "llama");
  EXPECT_EQ(s.tensor_count, 3u);
  EXPECT_EQ(s.parameter_count, 64 + 64 + 3);
  EXPECT_EQ(s.tensor_bytes, 92u);
  EXPECT_EQ(s.file_bytes, std::filesystem::file_size(dir.file("m.gguf")));
  ASSERT_EQ(s.types.size(), 2u);
  EXPECT_EQ(s.types.at("Q4_1").tensors, 2u);
  EXPECT_EQ(s.types.at("Q4_1").elements, 128);
  EXPECT_EQ(s.types.at("Q4_1").bytes, 80u);
  EXPECT_EQ(s.types.at("F32").bytes, 12u);
  ASSERT_EQ(s.metadata.size(), 4u);
  EXPECT_EQ(s.metadata[1], (std::pair<std::string, std::string>{"llama.block_count", "2"}));
  const std::string text = to_text(s);
  EXPECT_NE(to_text(s, 12).find("tokenizer.ggml.tokens = [\"a\", \"b\", \"...\n"),
            std::string::npos)
      << to_text(s, 12);
  EXPECT_NE(text.find("architecture: llama\n"), std::string::npos) << text;
  EXPECT_NE(text.find("tensors:      3, 131 parameters, 92 B\n"), std::string::npos) << text;
  EXPECT_NE(text.find("Q4_1"), std::string::npos) << text;
  EXPECT_NE(text.find("metadata (4 keys):"), std::string::npos) << text;
  // Long arrays abbreviated, newlines flattened: one line per key.
  EXPECT_NE(text.find("tokenizer.ggml.tokens = [\"a\", \"b\", \"c\", \"d\", \"e\", \"f\", "
                      "\"g\", \"h\", ... (9 items)]"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("tokenizer.chat_template = \"line one line two\""), std::string::npos)
      << text;
}

TEST(WeightSummary, OpenWeightsSniffsTheFormat) {
  io_test::TempDir dir;
  const TensorData t(DType::BF16, {2});
  write_safetensors(dir.file("m.bin"), {{"t", &t}}, {{"architecture", "bert"}});
  const auto st = open_weights(dir.file("m.bin"));
  EXPECT_EQ(st->format(), "safetensors");
  EXPECT_EQ(st->architecture(), "bert");
  EXPECT_EQ(summarize(*st).types.at("BF16").tensors, 1u);
  io_test::write_bytes(dir.file("junk"), io_test::Bytes{}.raw("GGUF\x01").b);
  const std::string msg = io_test::error_of([&] { open_weights(dir.file("junk")); });
  EXPECT_NE(msg.find(dir.file("junk") + ": GGUF:"), std::string::npos) << msg;
}

// The fuzzers' seed corpus must stay valid input (fuzz/make_corpus.py writes it).
TEST(WeightSummary, FuzzSeedCorpusParses) {
  size_t n = 0;
  for (const char* kind : {"gguf", "safetensors"}) {
    for (const auto& e :
         std::filesystem::directory_iterator(io_test::repo_root() / "fuzz/corpus" / kind)) {
      SCOPED_TRACE(e.path().string());
      EXPECT_NO_THROW(summarize(*open_weights(e.path().string())));
      ++n;
    }
  }
  EXPECT_GE(n, 8u);
}

}  // namespace
}  // namespace luminal
