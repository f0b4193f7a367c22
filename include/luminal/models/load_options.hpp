#pragma once
// How a model is loaded and compiled, shared by the decoder (causal_lm.hpp)
// and the sentence encoder (bert.hpp).
//
// Every model is built as ONE graph with symbolic dims (sequence length,
// cache position, batch), compiled once with compiler::compile for the
// device, and then run for every input size without recompiling. The compile
// cache (CompileOptions::cache) makes the second load of the same model fast.

#include <functional>
#include <string>
#include <string_view>

#include "luminal/compiler/compile.hpp"

namespace luminal::models {

struct LoadOptions {
  /// compiler::backend_for_device: "cpu-jit" (generated CPU kernels) or
  /// "cpu" (the reference interpreter: exact but slow).
  std::string device = "cpu-jit";
  /// Search budget, cache, seed. profile_dims are filled in by the loader
  /// when left empty.
  compiler::CompileOptions compile;
  /// Progress messages ("compiling ...", "binding weights ...") for a user
  /// interface; may be empty.
  std::function<void(std::string_view message)> progress;
  /// Where the current step stands ("part 1/3: candidate 5/16, best 1.62
  /// ms" while compiling), each replacing the last; may be empty.
  std::function<void(std::string_view detail)> progress_detail;
};

/// What loading cost, for `luminal generate --json` and the benchmarks.
struct LoadStats {
  double load_ms = 0;     // reading the files, building the graph, binding weights
  double compile_ms = 0;  // compiler::compile (a cache hit is fast)
  bool cached = false;    // the compile cache had the program
  double warmup_ms = 0;   // the warm-up run after loading (CausalLMOptions::warmup_tokens)
};

}  // namespace luminal::models
