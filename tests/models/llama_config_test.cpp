// Llama-family configuration from GGUF metadata and HF config.json, and the
// llama.cpp tensor names. Expected values are the ones written into the
// inputs (and llama.cpp's documented naming), not the parser's output.

#include "luminal/models/llama_config.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "luminal/error.hpp"
#include "luminal/io/gguf.hpp"
#include "luminal/io/gguf_writer.hpp"
#include "luminal/models/bert.hpp"

namespace luminal::models {
namespace {

// SmolLM2-like metadata.
GGUFWriter smol_metadata() {
  GGUFWriter w;
  w.add_string("general.architecture", "llama");
  w.add_u32("llama.block_count", 30);
  w.add_u32("llama.context_length", 8192);
  w.add_u32("llama.embedding_length", 576);
  w.add_u32("llama.feed_forward_length", 1536);
  w.add_u32("llama.attention.head_count", 9);
  w.add_u32("llama.attention.head_count_kv", 3);
  w.add_f32("llama.rope.freq_base", 100000.0f);
  w.add_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  w.add_u32("llama.vocab_size", 49152);
  return w;
}

// A GGUF with SmolLM2-like metadata and (tiny) tensors that decide tying and biases.
std::vector<std::byte> smol_gguf(bool with_output, bool with_bias) {
  GGUFWriter w = smol_metadata();
  const std::vector<std::byte> four(16);
  w.add_tensor("token_embd.weight", GGMLType::F32, {2, 2}, four);
  if (with_output) w.add_tensor("output.weight", GGMLType::F32, {2, 2}, four);
  if (with_bias) w.add_tensor("blk.0.attn_q.bias", GGMLType::F32, {4}, four);
  return w.to_bytes();
}

TEST(LlamaConfig, FromGgufMetadata) {
  const std::vector<std::byte> bytes = smol_gguf(false, false);
  const GGUFFile f = GGUFFile::from_memory(bytes, "smol.gguf");
  const LlamaModelConfig c = llama_config_from_gguf(f);
  const nn::AttentionConfig& a = c.llama.block.attention;
  EXPECT_EQ(c.architecture, "llama");
  EXPECT_EQ(c.llama.num_layers, 30);
  EXPECT_EQ(a.hidden_size, 576);
  EXPECT_EQ(a.num_heads, 9);
  EXPECT_EQ(a.num_kv_heads, 3);
  EXPECT_EQ(c.llama.block.intermediate_size, 1536);
  EXPECT_EQ(c.llama.vocab_size, 49152);
  EXPECT_EQ(a.rope_theta, 100000.0);
  EXPECT_FLOAT_EQ(static_cast<float>(c.llama.block.rms_norm_eps), 1e-5f);
  EXPECT_EQ(c.context_length, 8192);
  EXPECT_TRUE(c.llama.tie_word_embeddings);  // no output.weight
  EXPECT_FALSE(a.qkv_bias);
  // llama.cpp permuted q / k for "llama": the interleaved rotation undoes it.
  EXPECT_EQ(a.rope_layout, RopeLayout::Interleaved);
  EXPECT_FALSE(c.rope_scaling.has_value());
  EXPECT_NO_THROW(check_supported(c));

  const std::vector<std::byte> untied = smol_gguf(true, true);
  const LlamaModelConfig u = llama_config_from_gguf(GGUFFile::from_memory(untied, "u.gguf"));
  EXPECT_FALSE(u.llama.tie_word_embeddings);
  EXPECT_TRUE(u.llama.block.attention.qkv_bias);
}

TEST(LlamaConfig, GgufErrorsNameTheProblem) {
  GGUFWriter w;
  w.add_string("general.architecture", "whisper");
  const std::vector<std::byte> bytes = w.to_bytes();
  try {
    llama_config_from_gguf(GGUFFile::from_memory(bytes, "w.gguf"));
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("whisper"), std::string::npos) << e.what();
  }
  GGUFWriter missing;
  missing.add_string("general.architecture", "llama");
  const std::vector<std::byte> m = missing.to_bytes();
  EXPECT_THROW(llama_config_from_gguf(GGUFFile::from_memory(m, "m.gguf")), LookupError);
}

TEST(LlamaConfig, FromHfConfigJson) {
  const LlamaModelConfig c = llama_config_from_hf_json(R"({
    "model_type": "qwen2", "hidden_size": 64, "num_attention_heads": 8,
    "num_key_value_heads": 2, "intermediate_size": 128, "num_hidden_layers": 3,
    "vocab_size": 100, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
    "tie_word_embeddings": true, "max_position_embeddings": 4096, "hidden_act": "silu"})");
  const nn::AttentionConfig& a = c.llama.block.attention;
  EXPECT_EQ(c.architecture, "qwen2");
  EXPECT_EQ(a.hidden_size, 64);
  EXPECT_EQ(a.num_heads, 8);
  EXPECT_EQ(a.num_kv_heads, 2);
  EXPECT_EQ(c.llama.num_layers, 3);
  EXPECT_EQ(c.llama.vocab_size, 100);
  EXPECT_EQ(a.rope_theta, 1e6);
  EXPECT_EQ(c.llama.block.rms_norm_eps, 1e-6);
  EXPECT_TRUE(c.llama.tie_word_embeddings);
  EXPECT_TRUE(a.qkv_bias);  // Qwen2 has q / k / v biases
  EXPECT_FALSE(a.o_bias);   // but none on o_proj
  EXPECT_EQ(a.rope_layout, RopeLayout::HalfRotate);
  EXPECT_EQ(c.context_length, 4096);

  const LlamaModelConfig q3 = llama_config_from_hf_json(R"({
    "model_type": "qwen3", "hidden_size": 32, "num_attention_heads": 4, "head_dim": 16,
    "intermediate_size": 64, "num_hidden_layers": 1, "vocab_size": 10})");
  EXPECT_TRUE(q3.llama.block.attention.qk_norm);
  EXPECT_EQ(q3.llama.block.attention.head_dim, 16);
  EXPECT_EQ(q3.llama.block.attention.num_kv_heads, 4);  // defaults to the head count
}

TEST(LlamaConfig, HfErrorsAndRopeScaling) {
  EXPECT_THROW(llama_config_from_hf_json("{not json", "c.json"), Error);
  EXPECT_THROW(llama_config_from_hf_json(R"({"model_type": "llama"})", "c.json"), Error);
  EXPECT_THROW(llama_config_from_hf_json(R"({"model_type": "gpt2", "hidden_size": 4})"), Error);
  const LlamaModelConfig scaled = llama_config_from_hf_json(R"({
    "hidden_size": 32, "num_attention_heads": 4, "intermediate_size": 64,
    "num_hidden_layers": 1, "vocab_size": 10, "max_position_embeddings": 131072,
    "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 2.0,
                     "high_freq_factor": 5.0, "original_max_position_embeddings": 8192}})");
  ASSERT_TRUE(scaled.rope_scaling.has_value());
  EXPECT_EQ(scaled.rope_scaling->type, "llama3");
  EXPECT_EQ(scaled.rope_scaling->factor, 8.0);
  EXPECT_EQ(scaled.rope_scaling->low_freq_factor, 2.0);
  EXPECT_EQ(scaled.rope_scaling->high_freq_factor, 5.0);
  EXPECT_EQ(scaled.rope_scaling->original_context_length, 8192);
  EXPECT_NO_THROW(check_supported(scaled));
  // transformers 4 spelling ("type"), and a type the decoder cannot build.
  const LlamaModelConfig linear = llama_config_from_hf_json(R"({
    "hidden_size": 32, "num_attention_heads": 4, "intermediate_size": 64,
    "num_hidden_layers": 1, "vocab_size": 10, "rope_scaling": {"type": "linear", "factor": 2.0}})");
  ASSERT_TRUE(linear.rope_scaling.has_value());
  EXPECT_EQ(linear.rope_scaling->type, "linear");
  EXPECT_EQ(linear.rope_scaling->factor, 2.0);
  EXPECT_NO_THROW(check_supported(linear));
  const LlamaModelConfig yarn = llama_config_from_hf_json(R"({
    "hidden_size": 32, "num_attention_heads": 4, "intermediate_size": 64,
    "num_hidden_layers": 1, "vocab_size": 10, "rope_scaling": {"type": "yarn", "factor": 4.0}})");
  try {
    check_supported(yarn);
    FAIL() << "yarn must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("yarn"), std::string::npos) << e.what();
  }

  // transformers 5 nests theta and scaling in rope_parameters.
  const LlamaModelConfig v5 = llama_config_from_hf_json(R"({
    "hidden_size": 32, "num_attention_heads": 4, "intermediate_size": 64,
    "num_hidden_layers": 1, "vocab_size": 10,
    "rope_parameters": {"rope_theta": 50000.0, "rope_type": "default"}})");
  EXPECT_EQ(v5.llama.block.attention.rope_theta, 50000.0);
  EXPECT_FALSE(v5.rope_scaling.has_value());
}

TEST(LlamaConfig, GgufRopeScaling) {
  auto read = [](const GGUFWriter& w) {
    const std::vector<std::byte> bytes = w.to_bytes();
    return llama_config_from_gguf(GGUFFile::from_memory(bytes, "scaled.gguf"));
  };
  GGUFWriter linear = smol_metadata();
  linear.add_string("llama.rope.scaling.type", "linear");
  linear.add_f32("llama.rope.scaling.factor", 4.0f);
  linear.add_u32("llama.rope.scaling.original_context_length", 1024);
  const LlamaModelConfig l = read(linear);
  ASSERT_TRUE(l.rope_scaling.has_value());
  EXPECT_EQ(l.rope_scaling->type, "linear");
  EXPECT_EQ(l.rope_scaling->factor, 4.0);
  EXPECT_EQ(l.rope_scaling->original_context_length, 1024);
  // The key older llama.cpp versions wrote.
  GGUFWriter legacy = smol_metadata();
  legacy.add_f32("llama.rope.scale_linear", 2.0f);
  const LlamaModelConfig g = read(legacy);
  ASSERT_TRUE(g.rope_scaling.has_value());
  EXPECT_EQ(g.rope_scaling->type, "linear");
  EXPECT_EQ(g.rope_scaling->factor, 2.0);
  // "none" is no scaling.
  GGUFWriter none = smol_metadata();
  none.add_string("llama.rope.scaling.type", "none");
  EXPECT_FALSE(read(none).rope_scaling.has_value());
  // Llama 3.1 as llama.cpp converts it: the rope_freqs.weight divisors.
  GGUFWriter freqs = smol_metadata();
  std::vector<float> factors(32, 8.0f);  // head_dim 64
  factors[0] = 1.0f;
  factors[1] = 1.5f;
  freqs.add_tensor("rope_freqs.weight", GGMLType::F32, {32}, std::as_bytes(std::span(factors)));
  const LlamaModelConfig f = read(freqs);
  ASSERT_TRUE(f.rope_scaling.has_value());
  EXPECT_EQ(f.rope_scaling->type, "llama3");
  EXPECT_EQ(f.rope_scaling->freq_factors, factors);
  EXPECT_NO_THROW(check_supported(f));
  EXPECT_NE(f.describe().find("rope_freqs"), std::string::npos) << f.describe();
  // yarn is read, and refused by check_supported.
  GGUFWriter yarn = smol_metadata();
  yarn.add_string("llama.rope.scaling.type", "yarn");
  yarn.add_f32("llama.rope.scaling.factor", 4.0f);
  EXPECT_THROW(check_supported(read(yarn)), Error);
}

TEST(LlamaConfig, GgufTensorNames) {
  EXPECT_EQ(gguf_tensor_name("model.embed_tokens.weight"), "token_embd.weight");
  EXPECT_EQ(gguf_tensor_name("model.norm.weight"), "output_norm.weight");
  EXPECT_EQ(gguf_tensor_name("lm_head.weight"), "output.weight");
  EXPECT_EQ(gguf_tensor_name("model.layers.0.self_attn.q_proj.weight"), "blk.0.attn_q.weight");
  EXPECT_EQ(gguf_tensor_name("model.layers.12.self_attn.k_proj.bias"), "blk.12.attn_k.bias");
  EXPECT_EQ(gguf_tensor_name("model.layers.3.self_attn.o_proj.weight"), "blk.3.attn_output.weight");
  EXPECT_EQ(gguf_tensor_name("model.layers.3.self_attn.q_norm.weight"), "blk.3.attn_q_norm.weight");
  EXPECT_EQ(gguf_tensor_name("model.layers.29.mlp.gate_proj.weight"), "blk.29.ffn_gate.weight");
  EXPECT_EQ(gguf_tensor_name("model.layers.29.mlp.down_proj.weight"), "blk.29.ffn_down.weight");
  EXPECT_EQ(gguf_tensor_name("model.layers.1.input_layernorm.weight"), "blk.1.attn_norm.weight");
  EXPECT_EQ(gguf_tensor_name("model.layers.1.post_attention_layernorm.weight"),
            "blk.1.ffn_norm.weight");
  EXPECT_EQ(gguf_tensor_name("something.else"), "something.else");
}

TEST(BertConfig, FromHfConfigJson) {
  const BertConfig c = bert_config_from_hf_json(R"({
    "model_type": "bert", "vocab_size": 30522, "hidden_size": 384, "num_hidden_layers": 6,
    "num_attention_heads": 12, "intermediate_size": 1536, "max_position_embeddings": 512,
    "type_vocab_size": 2, "layer_norm_eps": 1e-12, "hidden_act": "gelu"})");
  EXPECT_EQ(c.vocab_size, 30522);
  EXPECT_EQ(c.hidden_size, 384);
  EXPECT_EQ(c.num_layers, 6);
  EXPECT_EQ(c.num_heads, 12);
  EXPECT_EQ(c.intermediate_size, 1536);
  EXPECT_EQ(c.layer_norm_eps, 1e-12);
  EXPECT_EQ(c.hidden_act, "gelu");
  EXPECT_THROW(bert_config_from_hf_json(R"({"model_type": "llama"})"), Error);
  EXPECT_THROW(bert_config_from_hf_json(R"({"model_type": "bert", "vocab_size": 3,
    "hidden_size": 10, "num_hidden_layers": 1, "num_attention_heads": 3,
    "intermediate_size": 4})"),
               Error);  // 10 is not divisible by 3 heads
}

}  // namespace
}  // namespace luminal::models
