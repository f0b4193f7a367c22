#pragma once
// Graph builders shared by the compiler tests.

#include <string>

#include "luminal/core/graph.hpp"
#include "luminal/core/tensor.hpp"
#include "luminal/nn/transformer.hpp"

namespace luminal::compiler::test_models {

// A Llama stack (hidden 16, GQA 4/2, RoPE, SwiGLU 32, vocab 12) with a KV cache of
// 16 positions; profile at p + s <= 16 so the cache scatter stays in range.
inline void build_llama(Graph& g, int layers, DType dtype = DType::F32) {
  nn::LlamaConfig c;
  c.block.attention = {.hidden_size = 16, .num_heads = 4, .num_kv_heads = 2, .dtype = dtype};
  c.block.intermediate_size = 32;
  c.vocab_size = 12;
  c.num_layers = layers;
  nn::LlamaModel m(g, c);
  Tensor tokens = g.input("tokens", {1, "s"}, DType::I32);
  auto step = m.forward(tokens, "p", m.make_caches(1, 16));
  g.output("logits", step.logits);
  for (size_t i = 0; i < step.caches.size(); ++i) {
    g.output("k" + std::to_string(i), step.caches[i].k);
    g.output("v" + std::to_string(i), step.caches[i].v);
  }
}

}  // namespace luminal::compiler::test_models
