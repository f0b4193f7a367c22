// luminal.models: the real-model runners (Llama-family CausalLM, BERT
// SentenceEmbedder), the packaged-model resolver and the `luminal` command
// (cli_run), which the Python entry point forwards generate / embed / info to.

#include <nanobind/ndarray.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/string_view.h>

#include <cstring>

#include "bindings.hpp"
#include "luminal/cli/cli.hpp"
#include "luminal/models/bert.hpp"
#include "luminal/models/causal_lm.hpp"
#include "luminal/models/packaged.hpp"

namespace luminal::py {

namespace {

using models::CausalLM;
using models::SentenceEmbedder;

// A float32 numpy array [rows, cols] that owns `values`.
nb::object float_matrix(std::vector<float> values, size_t rows, size_t cols) {
  auto* heap = new std::vector<float>(std::move(values));
  nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<float>*>(p); });
  const size_t shape[2] = {rows, cols};
  return nb::cast(nb::ndarray<nb::numpy, float, nb::ndim<2>>(heap->data(), 2, shape, owner));
}

// Equal-length rows as a [rows, cols] float32 array.
nb::object rows_matrix(const std::vector<std::vector<float>>& rows, size_t cols) {
  std::vector<float> flat;
  flat.reserve(rows.size() * cols);
  for (const auto& row : rows) flat.insert(flat.end(), row.begin(), row.end());
  return float_matrix(std::move(flat), rows.size(), cols);
}

template <typename Options>
Options load_options(const std::string& device, bool cache, size_t search_iters) {
  Options o;
  o.device = device;
  o.compile.cache = cache;
  o.compile.search_iters = search_iters;
  return o;
}

nb::dict load_stats(const models::LoadStats& s) {
  nb::dict d;
  d["load_ms"] = s.load_ms;
  d["compile_ms"] = s.compile_ms;
  d["cached"] = s.cached;
  d["warmup_ms"] = s.warmup_ms;
  return d;
}

}  // namespace

void bind_models(Bindings& b) {
  nb::module_ m = b.m.def_submodule("models", "Real models: Llama-family decoders, BERT embedders");

  m.def(
      "cli_run",
      [](const std::vector<std::string>& argv) {
        std::vector<std::string> args = argv;
        std::vector<char*> ptrs;
        for (std::string& a : args) ptrs.push_back(a.data());
        ptrs.push_back(nullptr);
        nb::gil_scoped_release release;
        return cli::run(static_cast<int>(args.size()), ptrs.data());
      },
      "argv"_a,
      "Run the `luminal` command line (argv[0] is the program name); returns the exit code.");
  m.def(
      "resolve_model", [](const std::string& name) { return models::resolve_model(name); },
      "name_or_path"_a,
      "The local path of 'smollm2' / 'minilm' (fetched once), else the argument.");
  m.def("models_cache_dir", &models::models_cache_dir);

  nb::class_<CausalLM>(m, "CausalLM", "A Llama-family decoder compiled once, with a KV cache.")
      .def(
          "__init__",
          [](CausalLM* self, const std::string& path, const std::string& device, bool all_logits,
             bool cache, size_t search_iters, int64_t cache_length, int64_t warmup_tokens,
             const std::optional<std::string>& matmul_precision) {
            auto o = load_options<models::CausalLMOptions>(device, cache, search_iters);
            if (matmul_precision)
              o.compile.matmul_precision = python_matmul_precision(*matmul_precision);
            o.all_logits = all_logits;
            o.cache_length = cache_length;
            o.warmup_tokens = warmup_tokens;
            nb::gil_scoped_release release;
            new (self) CausalLM(CausalLM::load(path, o));
          },
          "path"_a, "device"_a = "cpu-jit", "all_logits"_a = false, "cache"_a = true,
          "search_iters"_a = 16, "cache_length"_a = 512, "warmup_tokens"_a = 32,
          "matmul_precision"_a = nb::none())
      .def_prop_ro("config", [](const CausalLM& lm) { return lm.config().describe(); })
      .def_prop_ro("vocab_size", [](const CausalLM& lm) { return lm.config().llama.vocab_size; })
      .def_prop_ro("load_stats", [](const CausalLM& lm) { return load_stats(lm.load_stats()); })
      .def_prop_ro("eos_tokens", &CausalLM::eos_tokens)
      .def("encode_prompt", &CausalLM::encode_prompt, "prompt"_a, "chat"_a = false,
           "system"_a = nb::none())
      .def(
          "forward",
          [](CausalLM& lm, const std::vector<int32_t>& tokens) {
            TensorData logits;
            {
              nb::gil_scoped_release release;
              logits = lm.forward(tokens);
            }
            const size_t vocab = static_cast<size_t>(lm.config().llama.vocab_size);
            std::vector<float> v(static_cast<size_t>(logits.numel()));
            std::memcpy(v.data(), logits.data(), v.size() * sizeof(float));
            return float_matrix(std::move(v), v.size() / vocab, vocab);
          },
          "tokens"_a, "Logits [positions, vocab] of one forward from an empty cache.")
      .def(
          "generate",
          [](CausalLM& lm, const std::vector<int32_t>& prompt, int64_t max_tokens,
             double temperature, int64_t top_k, double top_p, double repetition_penalty,
             uint64_t seed, const std::vector<int32_t>& stop_tokens, bool stop_at_eos,
             const std::function<bool(int32_t, std::string)>& on_token) {
            models::GenerationOptions g;
            g.max_tokens = max_tokens;
            g.sampling = {temperature, top_k, top_p, repetition_penalty, seed};
            g.stop_tokens = stop_tokens;
            g.stop_at_eos = stop_at_eos;
            models::TokenCallback cb;
            if (on_token) {
              cb = [&](int32_t id, std::string_view text) {
                nb::gil_scoped_acquire acquire;
                return on_token(id, std::string(text));
              };
            }
            models::GenerationResult r;
            {
              nb::gil_scoped_release release;
              r = lm.generate(prompt, g, cb);
            }
            nb::dict d;
            d["tokens"] = r.tokens;
            d["text"] = r.text;
            d["prompt_tokens"] = r.prompt_tokens;
            d["finish_reason"] = r.finish_reason;
            d["ttft_ms"] = r.ttft_ms;
            d["tpot_ms"] = r.tpot_ms;
            return d;
          },
          "prompt"_a, "max_tokens"_a = 128, "temperature"_a = 0.0, "top_k"_a = 0, "top_p"_a = 1.0,
          "repetition_penalty"_a = 1.0, "seed"_a = 0, "stop_tokens"_a = std::vector<int32_t>{},
          "stop_at_eos"_a = true, "on_token"_a = nb::none(),
          "Generate from prompt ids; on_token(id, text) -> bool is called per token.");

  nb::class_<SentenceEmbedder>(m, "SentenceEmbedder",
                               "A BERT encoder with mean pooling and L2 normalisation.")
      .def(
          "__init__",
          [](SentenceEmbedder* self, const std::string& path, const std::string& device, bool cache,
             size_t search_iters) {
            auto o = load_options<models::LoadOptions>(device, cache, search_iters);
            nb::gil_scoped_release release;
            new (self) SentenceEmbedder(SentenceEmbedder::load(path, o));
          },
          "path"_a, "device"_a = "cpu-jit", "cache"_a = true, "search_iters"_a = 16)
      .def_prop_ro("config", [](const SentenceEmbedder& e) { return e.config().describe(); })
      .def_prop_ro("load_stats",
                   [](const SentenceEmbedder& e) { return load_stats(e.load_stats()); })
      .def(
          "embed",
          [](SentenceEmbedder& e, const std::vector<std::string>& texts) {
            std::vector<std::vector<float>> v;
            {
              nb::gil_scoped_release release;
              v = e.embed(texts);
            }
            return rows_matrix(v, static_cast<size_t>(e.config().hidden_size));
          },
          "texts"_a, "Unit-length sentence embeddings [len(texts), hidden].")
      .def(
          "embed_ids",
          [](SentenceEmbedder& e, const std::vector<std::vector<int32_t>>& ids) {
            std::vector<std::vector<float>> v;
            {
              nb::gil_scoped_release release;
              v = e.embed_ids(ids);
            }
            return rows_matrix(v, static_cast<size_t>(e.config().hidden_size));
          },
          "ids"_a, "Embeddings of token-id sequences (with [CLS] / [SEP]).");
}

}  // namespace luminal::py
