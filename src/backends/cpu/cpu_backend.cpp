#include "luminal/backends/cpu/cpu_backend.hpp"

#include <fstream>
#include <thread>

#include "luminal/backends/cpu/cpu_rules.hpp"

namespace luminal::cpu {

namespace {

// A CpuProgram seen through the compiler's Program interface; it owns the
// graph it was compiled from (the search hands over extracted graphs).
class CpuCompiledProgram : public compiler::Program {
public:
  CpuCompiledProgram(std::shared_ptr<const Graph> graph, const CpuOptions& options)
      : graph_(std::move(graph)), program_(*graph_, options) {}

  const Graph& graph() const override { return *graph_; }
  void set_input(const std::string& name, TensorData data) override {
    program_.set_input(name, std::move(data));
  }
  bool has_input(const std::string& name) const override { return program_.has_input(name); }
  const TensorData* bound_input(const std::string& name) const override {
    return program_.bound_input(name);
  }
  void run(const DimMap& dims) override { program_.run(dims); }
  bool run_before(const DimMap& dims, std::chrono::steady_clock::time_point deadline) override {
    return program_.run_before(dims, deadline);
  }
  const DimMap& dims() const override { return program_.dims(); }
  const TensorData& output(const std::string& name) const override { return program_.output(name); }
  const std::map<std::string, TensorData>& outputs() const override { return program_.outputs(); }
  std::optional<size_t> memory_bytes() const override { return program_.stats().arena_bytes; }
  bool update_in_place(const std::string& name) override { return program_.update_in_place(name); }
  TensorData take_output(const std::string& name) override { return program_.take_output(name); }

private:
  std::shared_ptr<const Graph> graph_;
  CpuProgram program_;
};

}  // namespace

std::string CpuBackend::device() const {
  // The CPU model name keeps cache entries of different hosts apart.
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0) return "host cpu: " + line.substr(line.find(':') + 2);
  return "host cpu";
}

void CpuBackend::register_rules(egraph::RuleRegistry& registry,
                                compiler::MatmulPrecision precision) const {
  add_cpu_rules(registry, precision);
}

std::unique_ptr<compiler::Program> CpuBackend::compile(std::shared_ptr<const Graph> graph) {
  CpuOptions options = options_;
  // The e-graph's kernel choices (SPEC invariant 2): one region per group.
  if (options.regions.empty())
    for (const KernelGroup& group : graph->kernel_groups())
      options.regions.push_back(Region{group.nodes, {}, group.op});
  return std::make_unique<CpuCompiledProgram>(std::move(graph), options);
}

}  // namespace luminal::cpu
