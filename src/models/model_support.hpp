#pragma once
// Helpers shared by the model loaders (causal_lm.cpp, bert.cpp): reading the
// files of a model, compiling its graph once, binding its weights.

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "luminal/compiler/compile.hpp"
#include "luminal/core/graph.hpp"
#include "luminal/io/stored_tensor.hpp"
#include "luminal/io/weight_binding.hpp"
#include "luminal/models/load_options.hpp"
#include "luminal/tokenizer/tokenizer.hpp"

namespace luminal::models::detail {

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

/// The whole file as text; throws Error naming the path.
std::string read_text_file(const std::filesystem::path& path);

/// The safetensors files of a Hugging Face directory: model.safetensors, or
/// the shards (model-00001-of-00002.safetensors ...) in name order. Throws
/// Error naming the directory when there are none.
std::vector<std::filesystem::path> safetensors_files(const std::filesystem::path& dir);

/// Compile `graph` for options.device (profiling at `profile_dims` unless the
/// options name their own), reporting progress; fills stats.compile_ms / cached.
compiler::CompiledModel compile_graph(const Graph& graph, const LoadOptions& options,
                                      const DimMap& profile_dims, LoadStats& stats);

/// Bind every persistent input of `graph` except `runtime_inputs` (tokens,
/// caches ...) from `files` into `model`; a parameter found in none of the
/// files throws LookupError naming it and the files.
void bind_parameters(const Graph& graph, const std::vector<std::unique_ptr<WeightSource>>& files,
                     const BindOptions& options, const std::set<std::string>& runtime_inputs,
                     compiler::CompiledModel& model);

/// What every loaded model holds: its files, tokenizer, graph and compiled program.
struct LoadedModel {
  std::vector<std::unique_ptr<WeightSource>> files;
  std::optional<tokenizer::Tokenizer> tok;
  std::unique_ptr<Graph> graph = std::make_unique<Graph>();
  std::optional<compiler::CompiledModel> model;
  LoadStats stats;

  /// Open the safetensors weights and the tokenizer (tokenizer.json, else
  /// vocab.txt, else none) of a Hugging Face directory.
  void open_hf_dir(const std::filesystem::path& dir);
  /// Compile `graph` (compile_graph), bind the parameters (bind_parameters)
  /// and fill the stats; `start` is when loading began.
  void compile_and_bind(const LoadOptions& options, const DimMap& profile_dims,
                        const BindOptions& bind, const std::set<std::string>& runtime_inputs,
                        Clock::time_point start);
};

/// A zero-filled host tensor of a concrete shape.
TensorData zeros(DType dtype, std::vector<int64_t> shape);

}  // namespace luminal::models::detail
