#include "luminal/models/bert.hpp"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "luminal/error.hpp"
#include "luminal/frontend/attention.hpp"
#include "luminal/frontend/elementwise.hpp"
#include "luminal/frontend/normalization.hpp"
#include "luminal/frontend/reduction.hpp"
#include "luminal/io/safetensors.hpp"
#include "luminal/nn/linear.hpp"
#include "luminal/nn/mlp.hpp"
#include "luminal/nn/normalization.hpp"
#include "model_support.hpp"

namespace luminal::models {

namespace fs = std::filesystem;
using detail::Clock;
using detail::ms_since;

namespace {

constexpr const char* kIds = "input_ids";
constexpr const char* kTypes = "token_type_ids";
constexpr const char* kMask = "attention_mask";
constexpr const char* kOut = "sentence_embedding";

std::string layer_name(int64_t i, const std::string& rest) {
  return "encoder.layer." + std::to_string(i) + "." + rest;
}

// One post-norm encoder layer (HF BertLayer).
class BertLayer {
public:
  BertLayer(Graph& g, int64_t i, const BertConfig& c)
      : c_(c),
        query_(g, layer_name(i, "attention.self.query"), c.hidden_size, c.hidden_size),
        key_(g, layer_name(i, "attention.self.key"), c.hidden_size, c.hidden_size),
        value_(g, layer_name(i, "attention.self.value"), c.hidden_size, c.hidden_size),
        attn_out_(g, layer_name(i, "attention.output.dense"), c.hidden_size, c.hidden_size),
        attn_norm_(g, layer_name(i, "attention.output.LayerNorm"), {c.hidden_size},
                   c.layer_norm_eps),
        intermediate_(g, layer_name(i, "intermediate.dense"), c.hidden_size, c.intermediate_size),
        out_(g, layer_name(i, "output.dense"), c.intermediate_size, c.hidden_size),
        out_norm_(g, layer_name(i, "output.LayerNorm"), {c.hidden_size}, c.layer_norm_eps) {}

  // x [b, s, hidden]; mask bool [b, 1, 1, s] (true = attend).
  Tensor forward(const Tensor& x, const Tensor& mask) const {
    const int64_t d = c_.hidden_size / c_.num_heads;
    auto heads = [&](const nn::Linear& proj) {
      return proj(x).reshape({x.dim(0), x.dim(1), c_.num_heads, d}).transpose(1, 2);
    };
    Tensor ctx = scaled_dot_product_attention(heads(query_), heads(key_), heads(value_), mask);
    ctx = ctx.transpose(1, 2).reshape({x.dim(0), x.dim(1), c_.hidden_size});
    Tensor h = attn_norm_(attn_out_(ctx) + x);
    return out_norm_(out_(nn::activation(intermediate_(h), c_.hidden_act)) + h);
  }

private:
  BertConfig c_;
  nn::Linear query_, key_, value_, attn_out_;
  nn::LayerNorm attn_norm_;
  nn::Linear intermediate_, out_;
  nn::LayerNorm out_norm_;
};

// input_ids / token_type_ids / attention_mask [b, s] (i32) -> unit vectors [b, hidden].
void build_graph(Graph& g, const BertConfig& c) {
  nn::Embedding words(g, "embeddings.word_embeddings", c.vocab_size, c.hidden_size);
  nn::Embedding positions(g, "embeddings.position_embeddings", c.max_position_embeddings,
                          c.hidden_size);
  nn::Embedding types(g, "embeddings.token_type_embeddings", c.type_vocab_size, c.hidden_size);
  nn::LayerNorm norm(g, "embeddings.LayerNorm", {c.hidden_size}, c.layer_norm_eps);
  std::vector<BertLayer> layers;
  for (int64_t i = 0; i < c.num_layers; ++i) layers.emplace_back(g, i, c);

  Tensor ids = g.input(kIds, {"b", "s"}, DType::I32);
  Tensor type_ids = g.input(kTypes, {"b", "s"}, DType::I32);
  Tensor mask = g.input(kMask, {"b", "s"}, DType::I32);
  const Expr s = ids.dim(1);
  // Positions 0 .. s - 1: the first s rows of the table, broadcast over the batch.
  Tensor h = words(ids) + types(type_ids) + positions.value(positions.weight()).slice(0, 0, s);
  h = norm(h);
  const Tensor attend = mask.cast(DType::Bool).reshape({ids.dim(0), 1, 1, s});
  for (const BertLayer& layer : layers) h = layer.forward(h, attend);
  // sentence-transformers' mean pooling and Normalize().
  const Tensor m = mask.cast(DType::F32).unsqueeze(2);  // [b, s, 1]
  Tensor pooled = sum(h * m, 1) / clamp_min(sum(m, 1), 1e-9);
  g.output(kOut, normalize(pooled, 2.0, 1, 1e-12));
}

}  // namespace

std::string BertConfig::describe() const {
  std::ostringstream s;
  s << "bert: " << num_layers << " layers, hidden " << hidden_size << ", " << num_heads
    << " heads, ffn " << intermediate_size << " (" << hidden_act << "), vocab " << vocab_size
    << ", positions " << max_position_embeddings << ", layer-norm eps " << layer_norm_eps;
  return s.str();
}

BertConfig bert_config_from_hf_json(std::string_view text, std::string_view origin) {
  const std::string where(origin);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(where + ": not valid JSON: " + e.what());
  }
  if (!j.is_object()) throw Error(where + ": expected a JSON object");
  const std::string type = j.value("model_type", "");
  if (type != "bert")
    throw Error(where + ": model_type '" + type + "' is not a BERT encoder (expected \"bert\")");
  auto get_int = [&](const char* key) -> int64_t {
    if (!j.contains(key) || !j[key].is_number_integer())
      throw Error(where + ": missing integer field '" + key + "'");
    return j[key].get<int64_t>();
  };
  BertConfig c;
  c.vocab_size = get_int("vocab_size");
  c.hidden_size = get_int("hidden_size");
  c.num_layers = get_int("num_hidden_layers");
  c.num_heads = get_int("num_attention_heads");
  c.intermediate_size = get_int("intermediate_size");
  if (j.contains("max_position_embeddings"))
    c.max_position_embeddings = get_int("max_position_embeddings");
  if (j.contains("type_vocab_size")) c.type_vocab_size = get_int("type_vocab_size");
  if (j.contains("layer_norm_eps") && j["layer_norm_eps"].is_number())
    c.layer_norm_eps = j["layer_norm_eps"].get<double>();
  const std::string act = j.value("hidden_act", std::string("gelu"));
  if (act == "gelu") {
    c.hidden_act = "gelu";
  } else if (act == "gelu_new" || act == "gelu_pytorch_tanh") {
    c.hidden_act = "gelu_tanh";
  } else if (act == "relu" || act == "silu" || act == "tanh") {
    c.hidden_act = act;
  } else {
    throw Error(where + ": hidden_act '" + act + "' is not supported");
  }
  if (j.contains("position_embedding_type") && j["position_embedding_type"] != "absolute")
    throw Error(where + ": position_embedding_type " + j["position_embedding_type"].dump() +
                " is not supported (only \"absolute\")");
  if (c.num_heads <= 0 || c.hidden_size % c.num_heads != 0)
    throw Error(where + ": hidden_size " + std::to_string(c.hidden_size) +
                " is not divisible by num_attention_heads " + std::to_string(c.num_heads));
  return c;
}

struct SentenceEmbedder::Impl : detail::LoadedModel {
  BertConfig config;
};

SentenceEmbedder::SentenceEmbedder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SentenceEmbedder::SentenceEmbedder(SentenceEmbedder&&) noexcept = default;
SentenceEmbedder& SentenceEmbedder::operator=(SentenceEmbedder&&) noexcept = default;
SentenceEmbedder::~SentenceEmbedder() = default;

SentenceEmbedder SentenceEmbedder::load(const std::string& dir, const LoadOptions& options) {
  const Clock::time_point start = Clock::now();
  const fs::path p(dir);
  if (!fs::is_directory(p))
    throw Error(dir +
                ": expected a model directory (config.json, model.safetensors, "
                "tokenizer.json)");
  if (options.progress) options.progress("reading " + dir);
  auto impl = std::make_unique<Impl>();
  impl->config = bert_config_from_hf_json(detail::read_text_file(p / "config.json"),
                                          (p / "config.json").string());
  impl->open_hf_dir(p);
  build_graph(*impl->graph, impl->config);

  BindOptions bind;
  // Weights stored in the dtype the graph wants are read straight from the
  // file's mapping (the model keeps its files open): no second copy in memory.
  bind.borrow_mapping = true;
  bind.convert_dtypes = true;  // f16 / bf16 checkpoints run in f32
  // BertFor* checkpoints prefix the encoder's names with "bert.".
  if (impl->files.front()->find("bert.embeddings.word_embeddings.weight"))
    bind.tensor_name = [](std::string_view name) { return "bert." + std::string(name); };
  impl->compile_and_bind(options, {{"b", 1}, {"s", 4}}, bind, {kIds, kTypes, kMask}, start);
  return SentenceEmbedder(std::move(impl));
}

const BertConfig& SentenceEmbedder::config() const {
  return impl_->config;
}
const LoadStats& SentenceEmbedder::load_stats() const {
  return impl_->stats;
}
const tokenizer::Tokenizer& SentenceEmbedder::tokenizer() const {
  if (!impl_->tok) throw Error("SentenceEmbedder: the model has no tokenizer.json / vocab.txt");
  return *impl_->tok;
}

std::vector<std::vector<float>> SentenceEmbedder::embed(const std::vector<std::string>& texts) {
  std::vector<std::vector<int32_t>> ids;
  for (const std::string& t : texts)
    ids.push_back(tokenizer()
                      .encode(t, true, static_cast<size_t>(impl_->config.max_position_embeddings))
                      .ids);
  return embed_ids(ids);
}

std::vector<std::vector<float>> SentenceEmbedder::embed_ids(
    const std::vector<std::vector<int32_t>>& ids) {
  if (ids.empty()) return {};
  const int64_t b = static_cast<int64_t>(ids.size());
  size_t longest = 1;
  for (const auto& seq : ids) longest = std::max(longest, seq.size());
  const int64_t s = static_cast<int64_t>(longest);
  if (s > impl_->config.max_position_embeddings)
    throw Error("SentenceEmbedder: a sequence of " + std::to_string(s) +
                " tokens exceeds the position table (" +
                std::to_string(impl_->config.max_position_embeddings) + ")");
  TensorData input(DType::I32, {b, s}), types(DType::I32, {b, s}), mask(DType::I32, {b, s});
  for (int64_t i = 0; i < b; ++i) {
    const auto& seq = ids[i];
    for (size_t j = 0; j < seq.size(); ++j) {
      if (seq[j] < 0 || seq[j] >= impl_->config.vocab_size)
        throw IndexError("SentenceEmbedder: token id " + std::to_string(seq[j]) +
                         " is outside the vocabulary [0, " +
                         std::to_string(impl_->config.vocab_size) + ")");
      input.set_int(i * s + static_cast<int64_t>(j), seq[j]);
      mask.set_int(i * s + static_cast<int64_t>(j), 1);
    }
  }
  compiler::CompiledModel& m = *impl_->model;
  m.set_input(kIds, std::move(input));
  m.set_input(kTypes, std::move(types));
  m.set_input(kMask, std::move(mask));
  m.run();
  const TensorData& out = m.output(kOut);
  const int64_t hidden = impl_->config.hidden_size;
  std::vector<std::vector<float>> vectors(static_cast<size_t>(b));
  const auto* data = reinterpret_cast<const float*>(out.data());
  for (int64_t i = 0; i < b; ++i) vectors[i].assign(data + i * hidden, data + (i + 1) * hidden);
  return vectors;
}

}  // namespace luminal::models
