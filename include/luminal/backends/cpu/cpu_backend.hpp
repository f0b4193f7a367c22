#pragma once
// The CPU backend as a compiler backend: each candidate the search extracts is
// compiled by CpuProgram (generated C++ kernels, JIT, arena plan) and timed
// for real. The backend's rules (cpu_rules.hpp) add kernel ops to the e-graph;
// an extracted graph's kernel groups become CpuProgram regions (one kernel
// each: generated loops, or a library call), every other node its own kernel.

#include <memory>
#include <string>

#include "luminal/backends/cpu/program.hpp"
#include "luminal/compiler/backend.hpp"

namespace luminal::cpu {

class CpuBackend : public compiler::Backend {
public:
  explicit CpuBackend(CpuOptions options = {}) : options_(std::move(options)) {}
  std::string name() const override { return "cpu-jit"; }
  /// The host (kernels are compiled with -march=native and cached per host CPU).
  std::string device() const override;
  using compiler::Backend::register_rules;
  void register_rules(egraph::RuleRegistry& registry,
                      compiler::MatmulPrecision precision) const override;
  std::unique_ptr<compiler::Program> compile(std::shared_ptr<const Graph> graph) override;

private:
  CpuOptions options_;
};

}  // namespace luminal::cpu
