#include "luminal/models/llama_config.hpp"

#include <array>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>

#include "luminal/error.hpp"
#include "luminal/io/gguf.hpp"
#include "luminal/io/stored_tensor.hpp"

namespace luminal::models {

namespace {

using nlohmann::json;

struct Family {
  std::string_view name;
  bool qkv_bias;  // Qwen2
  bool qk_norm;   // Qwen3
  // GGUF only: llama.cpp permutes q / k rows for these (see the header).
  bool gguf_interleaved;
};

// The Llama-like families the decoder builds (nn::TransformerBlock: RMSNorm,
// RoPE, GQA, SwiGLU). Biases and norms are defaults; GGUF tensors and HF
// config fields override them where they say otherwise.
constexpr std::array<Family, 4> kFamilies = {{
    {"llama", false, false, true},
    {"mistral", false, false, true},
    {"qwen2", true, false, false},
    {"qwen3", false, true, false},
}};

const Family& family(std::string_view arch, std::string_view origin) {
  for (const Family& f : kFamilies)
    if (f.name == arch) return f;
  std::string known;
  for (const Family& f : kFamilies) known += (known.empty() ? "" : ", ") + std::string(f.name);
  throw Error(std::string(origin) + ": architecture '" + std::string(arch) +
              "' is not a supported Llama-family decoder (supported: " + known + ")");
}

double number_or(const json& j, const char* key, double fallback) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : fallback;
}

// RoPE scaling in GGUF metadata (llama.cpp's keys) or, for Llama 3.1, as the
// per-frequency divisors of the `rope_freqs.weight` tensor.
std::optional<RopeScaling> gguf_rope_scaling(const GGUFFile& f, const std::string& p) {
  auto opt_float = [&](const std::string& key, double fallback) {
    return f.has(key) ? f.get_float(key) : fallback;
  };
  RopeScaling s;
  s.type = f.has(p + "rope.scaling.type") ? f.get_string(p + "rope.scaling.type") : "none";
  s.factor = opt_float(p + "rope.scaling.factor", 1.0);
  if (s.type == "none" && f.has(p + "rope.scale_linear")) {  // the key before rope.scaling.*
    s.type = "linear";
    s.factor = f.get_float(p + "rope.scale_linear");
  }
  if (f.has(p + "rope.scaling.original_context_length"))
    s.original_context_length = f.get_int(p + "rope.scaling.original_context_length");
  s.low_freq_factor = opt_float(p + "rope.scaling.low_freq_factor", s.low_freq_factor);
  s.high_freq_factor = opt_float(p + "rope.scaling.high_freq_factor", s.high_freq_factor);
  if (const StoredTensor* t = f.find("rope_freqs.weight")) {
    const TensorData factors = dequantize_to_f32(*t);
    for (int64_t i = 0; i < factors.numel(); ++i)
      s.freq_factors.push_back(static_cast<float>(factors.get(i)));
    if (s.type == "none") s.type = "llama3";
  }
  if (s.type == "none" || (s.type == "linear" && s.factor == 1.0)) return std::nullopt;
  return s;
}

}  // namespace

std::string LlamaModelConfig::describe() const {
  const nn::AttentionConfig& a = llama.block.attention;
  std::ostringstream s;
  s << architecture << ": " << llama.num_layers << " layers, hidden " << a.hidden_size << ", "
    << a.num_heads << " heads / " << (a.num_kv_heads ? a.num_kv_heads : a.num_heads) << " kv heads";
  if (a.head_dim) s << " of " << a.head_dim;
  s << ", ffn " << llama.block.intermediate_size << ", vocab " << llama.vocab_size
    << ", rope theta " << a.rope_theta << " ("
    << (a.rope_layout == RopeLayout::Interleaved ? "interleaved" : "half-rotate") << ")";
  if (rope_scaling) {
    s << ", rope scaling " << rope_scaling->type;
    if (rope_scaling->freq_factors.empty())
      s << " x" << rope_scaling->factor;
    else
      s << " (rope_freqs)";
  }
  s << ", rms eps " << llama.block.rms_norm_eps;
  if (llama.tie_word_embeddings) s << ", tied embeddings";
  if (a.qkv_bias) s << ", qkv bias";
  if (a.qk_norm) s << ", qk norm";
  if (context_length) s << ", context " << context_length;
  return s.str();
}

int64_t LlamaModelConfig::head_dim() const {
  const nn::AttentionConfig& a = llama.block.attention;
  return a.head_dim ? a.head_dim : (a.num_heads > 0 ? a.hidden_size / a.num_heads : 0);
}

LlamaModelConfig llama_config_from_gguf(const GGUFFile& f) {
  LlamaModelConfig c;
  c.architecture = f.architecture();
  if (c.architecture.empty())
    throw LookupError(f.path() + ": GGUF has no general.architecture, cannot build a model");
  const Family& fam = family(c.architecture, f.path());
  const std::string p = c.architecture + ".";
  nn::AttentionConfig& a = c.llama.block.attention;
  c.llama.num_layers = f.get_int(p + "block_count");
  a.hidden_size = f.get_int(p + "embedding_length");
  a.num_heads = f.get_int(p + "attention.head_count");
  a.num_kv_heads =
      f.has(p + "attention.head_count_kv") ? f.get_int(p + "attention.head_count_kv") : a.num_heads;
  if (f.has(p + "attention.key_length")) a.head_dim = f.get_int(p + "attention.key_length");
  c.llama.block.intermediate_size = f.get_int(p + "feed_forward_length");
  c.llama.block.rms_norm_eps = f.has(p + "attention.layer_norm_rms_epsilon")
                                   ? f.get_float(p + "attention.layer_norm_rms_epsilon")
                                   : 1e-5;
  a.norm_eps = c.llama.block.rms_norm_eps;
  a.rope_theta = f.has(p + "rope.freq_base") ? f.get_float(p + "rope.freq_base") : 10000.0;
  a.rope_layout = fam.gguf_interleaved ? RopeLayout::Interleaved : RopeLayout::HalfRotate;
  if (f.has(p + "context_length")) c.context_length = f.get_int(p + "context_length");
  c.rope_scaling = gguf_rope_scaling(f, p);
  // The vocabulary: the key when present, else the token list or the embedding.
  if (f.has(p + "vocab_size")) {
    c.llama.vocab_size = f.get_int(p + "vocab_size");
  } else if (f.has("tokenizer.ggml.tokens")) {
    c.llama.vocab_size = static_cast<int64_t>(f.value("tokenizer.ggml.tokens").size());
  } else {
    c.llama.vocab_size = f.tensor("token_embd.weight").shape.at(0);
  }
  // What the tensors say: tied embeddings (no output.weight), biases, qk norms.
  c.llama.tie_word_embeddings = f.find("output.weight") == nullptr;
  a.qkv_bias = f.find("blk.0.attn_q.bias") != nullptr || fam.qkv_bias;
  a.o_bias = f.find("blk.0.attn_output.bias") != nullptr;
  a.qk_norm = f.find("blk.0.attn_q_norm.weight") != nullptr || fam.qk_norm;
  c.llama.block.mlp_bias = f.find("blk.0.ffn_up.bias") != nullptr;
  return c;
}

LlamaModelConfig llama_config_from_hf_json(std::string_view text, std::string_view origin) {
  const std::string where(origin);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw Error(where + ": not valid JSON: " + e.what());
  }
  if (!j.is_object()) throw Error(where + ": expected a JSON object");
  auto get_int = [&](const char* key) -> int64_t {
    if (!j.contains(key) || !j[key].is_number_integer())
      throw Error(where + ": missing integer field '" + key + "'");
    return j[key].get<int64_t>();
  };
  auto opt_number = [&](const char* key, double fallback) { return number_or(j, key, fallback); };
  auto opt_bool = [&](const char* key, bool fallback) {
    return j.contains(key) && j[key].is_boolean() ? j[key].get<bool>() : fallback;
  };
  LlamaModelConfig c;
  c.architecture = j.value("model_type", "llama");
  const Family& fam = family(c.architecture, origin);
  nn::AttentionConfig& a = c.llama.block.attention;
  c.llama.num_layers = get_int("num_hidden_layers");
  a.hidden_size = get_int("hidden_size");
  a.num_heads = get_int("num_attention_heads");
  a.num_kv_heads = j.contains("num_key_value_heads") && j["num_key_value_heads"].is_number()
                       ? j["num_key_value_heads"].get<int64_t>()
                       : a.num_heads;
  if (j.contains("head_dim") && j["head_dim"].is_number_integer())
    a.head_dim = j["head_dim"].get<int64_t>();
  c.llama.block.intermediate_size = get_int("intermediate_size");
  c.llama.vocab_size = get_int("vocab_size");
  c.llama.block.rms_norm_eps = opt_number("rms_norm_eps", 1e-6);
  a.norm_eps = c.llama.block.rms_norm_eps;
  a.rope_theta = opt_number("rope_theta", 10000.0);
  a.rope_layout = RopeLayout::HalfRotate;
  a.qkv_bias = opt_bool("attention_bias", fam.qkv_bias);
  a.o_bias = c.architecture == "llama" && a.qkv_bias;  // Llama's attention_bias covers o_proj
  a.qk_norm = fam.qk_norm;
  c.llama.block.mlp_bias = opt_bool("mlp_bias", false);
  c.llama.tie_word_embeddings = opt_bool("tie_word_embeddings", false);
  if (j.contains("max_position_embeddings") && j["max_position_embeddings"].is_number_integer())
    c.context_length = j["max_position_embeddings"].get<int64_t>();
  // RoPE: transformers < 5 writes rope_theta + rope_scaling, transformers 5
  // one rope_parameters object with both.
  for (const char* key : {"rope_scaling", "rope_parameters"}) {
    if (!j.contains(key) || !j[key].is_object()) continue;
    const json& r = j[key];
    if (r.contains("rope_theta") && r["rope_theta"].is_number())
      a.rope_theta = r["rope_theta"].get<double>();
    RopeScaling s;
    s.type = r.value("rope_type", r.value("type", std::string("default")));
    s.factor = number_or(r, "factor", 1.0);
    s.original_context_length =
        static_cast<int64_t>(number_or(r, "original_max_position_embeddings", 0.0));
    s.low_freq_factor = number_or(r, "low_freq_factor", s.low_freq_factor);
    s.high_freq_factor = number_or(r, "high_freq_factor", s.high_freq_factor);
    if (s.type != "default") c.rope_scaling = s;
  }
  if (j.contains("hidden_act") && j["hidden_act"] != "silu")
    throw Error(where + ": hidden_act " + j["hidden_act"].dump() +
                " is not supported (the decoder's feed-forward is SwiGLU with silu)");
  return c;
}

void check_supported(const LlamaModelConfig& c) {
  const nn::AttentionConfig& a = c.llama.block.attention;
  if (c.llama.num_layers <= 0 || a.hidden_size <= 0 || a.num_heads <= 0 ||
      c.llama.block.intermediate_size <= 0 || c.llama.vocab_size <= 0)
    throw Error(c.architecture + ": the configuration has a non-positive size (" + c.describe() +
                ")");
  // Computing the frequencies once checks every scaling parameter.
  if (c.rope_scaling) rope_inv_freq(c.head_dim(), a.rope_theta, c.rope_scaling, c.context_length);
}

std::string gguf_tensor_name(std::string_view hf) {
  static const std::array<std::pair<std::string_view, std::string_view>, 13> kLayer = {{
      {"self_attn.q_proj", "attn_q"},
      {"self_attn.k_proj", "attn_k"},
      {"self_attn.v_proj", "attn_v"},
      {"self_attn.o_proj", "attn_output"},
      {"self_attn.q_norm", "attn_q_norm"},
      {"self_attn.k_norm", "attn_k_norm"},
      {"mlp.gate_proj", "ffn_gate"},
      {"mlp.up_proj", "ffn_up"},
      {"mlp.down_proj", "ffn_down"},
      {"input_layernorm", "attn_norm"},
      {"post_attention_layernorm", "ffn_norm"},
      {"k_cache", "k_cache"},
      {"v_cache", "v_cache"},
  }};
  auto suffix_after = [&](std::string_view prefix) -> std::optional<std::string_view> {
    if (hf.substr(0, prefix.size()) != prefix) return std::nullopt;
    return hf.substr(prefix.size());
  };
  if (auto rest = suffix_after("model.embed_tokens.")) return "token_embd." + std::string(*rest);
  if (auto rest = suffix_after("model.norm.")) return "output_norm." + std::string(*rest);
  if (auto rest = suffix_after("lm_head.")) return "output." + std::string(*rest);
  if (auto rest = suffix_after("model.layers.")) {
    const size_t dot = rest->find('.');
    if (dot == std::string_view::npos) return std::string(hf);
    const std::string_view layer = rest->substr(0, dot);
    const std::string_view tail = rest->substr(dot + 1);  // "self_attn.q_proj.weight"
    for (const auto& [from, to] : kLayer) {
      if (tail.substr(0, from.size()) == from &&
          (tail.size() == from.size() || tail[from.size()] == '.'))
        return "blk." + std::string(layer) + "." + std::string(to) +
               std::string(tail.substr(from.size()));
    }
  }
  return std::string(hf);
}

}  // namespace luminal::models
