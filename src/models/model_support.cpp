#include "model_support.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "luminal/error.hpp"
#include "luminal/io/mapped_file.hpp"
#include "luminal/io/safetensors.hpp"

namespace luminal::models::detail {

namespace fs = std::filesystem;

std::string read_text_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path.string() + ": cannot be read");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<fs::path> safetensors_files(const fs::path& dir) {
  if (fs::is_regular_file(dir / "model.safetensors")) return {dir / "model.safetensors"};
  std::vector<fs::path> shards;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.is_regular_file() && entry.path().extension() == ".safetensors")
      shards.push_back(entry.path());
  if (shards.empty()) throw Error(dir.string() + ": no *.safetensors weight file in the directory");
  std::sort(shards.begin(), shards.end());
  return shards;
}

compiler::CompiledModel compile_graph(const Graph& graph, const LoadOptions& options,
                                      const DimMap& profile_dims, LoadStats& stats) {
  compiler::CompileOptions copts = options.compile;
  if (copts.profile_dims.empty()) copts.profile_dims = profile_dims;
  std::unique_ptr<compiler::Backend> backend = compiler::backend_for_device(options.device);
  if (options.progress) options.progress("compiling for " + options.device);
  if (options.progress_detail && !copts.on_progress)
    copts.on_progress = [&options](const compiler::SearchProgress& p) {
      std::string d;
      if (p.blocks > 1)
        d += "part " + std::to_string(p.block + 1) + "/" + std::to_string(p.blocks) + ": ";
      if (p.confirming) {
        d += "timing the best candidates again";
      } else {
        d += "candidate " + std::to_string(p.candidates) + "/" + std::to_string(p.budget);
        if (p.best_ms > 0) {
          char best[48];
          std::snprintf(best, sizeof best, ", best %.3g ms", p.best_ms);
          d += best;
        }
      }
      options.progress_detail(d);
    };
  const Clock::time_point start = Clock::now();
  compiler::CompiledModel model = compiler::compile(graph, *backend, copts);
  stats.compile_ms = ms_since(start);
  stats.cached = model.stats().cached;
  return model;
}

void bind_parameters(const Graph& graph, const std::vector<std::unique_ptr<WeightSource>>& files,
                     const BindOptions& options, const std::set<std::string>& runtime_inputs,
                     compiler::CompiledModel& model) {
  std::set<std::string> wanted;
  for (NodeId id : graph.inputs()) {
    const Node& n = graph.node(id);
    if (!runtime_inputs.count(n.name)) wanted.insert(n.name);
  }
  for (const auto& file : files) {
    BoundWeights bound = bind_weights(graph, *file, options);
    for (auto& [name, data] : bound.tensors) {
      if (!wanted.erase(name)) continue;  // a runtime input, or bound by an earlier shard
      // Weights borrowed from the file's mapping are read in now, at load,
      // rather than by page faults during the first forward (the TTFT).
      if (data.borrowed()) prefault({data.data(), data.nbytes()});
      model.set_input(name, std::move(data));
    }
  }
  if (!wanted.empty()) {
    std::string names, paths;
    size_t shown = 0;
    for (const std::string& n : wanted)
      if (shown++ < 5) names += (names.empty() ? "" : ", ") + n;
    if (wanted.size() > 5) names += ", ... (" + std::to_string(wanted.size()) + " in all)";
    for (const auto& f : files) paths += (paths.empty() ? "" : ", ") + f->path();
    throw LookupError("model weights missing from " + paths + ": " + names);
  }
}

void LoadedModel::open_hf_dir(const fs::path& dir) {
  for (const fs::path& f : safetensors_files(dir))
    files.push_back(std::make_unique<SafetensorsFile>(SafetensorsFile::open(f.string())));
  for (const char* name : {"tokenizer.json", "vocab.txt"}) {
    if (fs::is_regular_file(dir / name)) {
      tok = tokenizer::Tokenizer::from_file((dir / name).string());
      return;
    }
  }
}

void LoadedModel::compile_and_bind(const LoadOptions& options, const DimMap& profile_dims,
                                   const BindOptions& bind,
                                   const std::set<std::string>& runtime_inputs,
                                   Clock::time_point start) {
  model.emplace(compile_graph(*graph, options, profile_dims, stats));
  if (options.progress) options.progress("binding weights");
  bind_parameters(*graph, files, bind, runtime_inputs, *model);
  stats.load_ms = ms_since(start) - stats.compile_ms;
}

TensorData zeros(DType dtype, std::vector<int64_t> shape) {
  return TensorData(dtype, std::move(shape));
}

}  // namespace luminal::models::detail
