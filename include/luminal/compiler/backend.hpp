#pragma once
// The backend interface: what the compiler needs from a device (SPEC section 7).
//
// A backend
//   - names itself and its device (both go into the compile-cache key);
//   - registers its ops (egraph::OpRegistry, at start-up) and its rulesets into
//     the phases of the RuleRegistry the compiler hands it (a copy of the
//     global registry per compile, so backends never leak rules into each
//     other and the core never names a backend ruleset);
//   - compiles an extracted HLIR graph (egraph::extract's output: HLIR ops plus
//     whatever its own ops lowered to) into a Program.
//
// A Program mirrors luminal::Interpreter: set_input (persistent inputs stay
// bound across runs), run(dims) (dims not given are inferred from the bound
// inputs, as luminal::infer_dims does), output(name); plus profile(), timed
// runs on dummy inputs, which is what the search compares.
//
// Device memory: memory_space() names where a program's buffers live ("host"
// for the CPU and reference backends, "cuda:<n>" for a GPU backend);
// bind_device_memory() binds an input to memory the caller already holds on
// that device (no copy: a KV cache or weights shared with another library),
// and input_device_pointer() / output_device_pointer() expose the buffers so
// the caller can hand them on without a round trip through host copies.
//
// The reference backend (the interpreter: every HLIR op lowers to itself) is
// the oracle and the first implementation; cpu::CpuBackend is the CPU one.

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "luminal/compiler/matmul_precision.hpp"
#include "luminal/core/graph.hpp"
#include "luminal/core/tensor_data.hpp"
#include "luminal/shape/expr.hpp"

namespace luminal::egraph {
class RuleRegistry;
}

namespace luminal::compiler {

/// Dummy profiling inputs for every input of `graph` at `dims`, valid for
/// every op (SPEC 6, 12): floats are 1 (zeros make NaNs in norms), integers
/// and bools 0 (index inputs stay in range for any gathered tensor).
std::map<std::string, TensorData> dummy_inputs(const Graph& graph, const DimMap& dims);
/// Program::profile binds dummy values shared by every profile in the
/// process (by dtype and shape, up to 1 GiB); compile() releases them when
/// it is done.
void release_profile_inputs();

class Program {
public:
  virtual ~Program() = default;
  /// The HLIR graph this program was compiled from (input/output declarations).
  virtual const Graph& graph() const = 0;
  /// Bind an input; checks like Interpreter::set_input.
  virtual void set_input(const std::string& name, TensorData data) = 0;
  virtual bool has_input(const std::string& name) const = 0;
  /// Execute. Non-persistent inputs are released afterwards.
  virtual void run(const DimMap& dims = {}) = 0;
  /// run(), except that the backend may stop between its kernels once past
  /// `deadline` (profile()'s bound: a candidate that cannot win is not run to
  /// the end); false when it stopped, its outputs then undefined. The default
  /// runs to the end.
  virtual bool run_before(const DimMap& dims, std::chrono::steady_clock::time_point /*deadline*/) {
    run(dims);
    return true;
  }
  /// Dims of the last run.
  virtual const DimMap& dims() const = 0;
  /// A named output of the last run; throws LookupError if unknown.
  virtual const TensorData& output(const std::string& name) const = 0;
  virtual const std::map<std::string, TensorData>& outputs() const = 0;
  /// Output `name` of the last run, handed over to the caller: without a copy
  /// where the backend can (the program allocates a new buffer next run); the
  /// output is then no longer in outputs() until the next run. Default: a copy.
  virtual TensorData take_output(const std::string& name) { return output(name); }
  /// Ask the program to update the state behind output `name` in place: when
  /// `name` is a Scatter into a persistent input that nothing else reads (a KV
  /// cache's "<input>.next"), later runs write the new rows straight into the
  /// bound input instead of copying the whole cache, output(name) is that
  /// input, and outputs() no longer lists it, so the caller must not rebind it.
  /// Returns false (and changes nothing) when the program cannot.
  virtual bool update_in_place(const std::string& /*name*/) { return false; }
  /// Where this program's buffers live: "host" (CPU memory), or a device
  /// name such as "cuda:0" for a GPU backend.
  virtual std::string memory_space() const { return "host"; }
  /// Bind input `name` to `bytes` bytes of memory in memory_space() at `data`,
  /// holding a tensor of `shape` in the input's declared dtype, without a copy.
  /// The memory must stay valid (and unchanged while a run reads it) until the
  /// input is rebound or the program is destroyed; `owner`, if given, is kept
  /// alive that long. Throws like set_input for a wrong shape, and Error when
  /// `bytes` does not match the shape. Default: borrows host memory.
  virtual void bind_device_memory(const std::string& name, void* data, size_t bytes,
                                  const std::vector<int64_t>& shape,
                                  std::shared_ptr<const void> owner = nullptr);
  /// The bound data of input `name` (nullptr if unbound); host backends only.
  virtual const TensorData* bound_input(const std::string& /*name*/) const { return nullptr; }
  /// The memory of bound input `name` in memory_space() (nullptr if unbound).
  virtual const void* input_device_pointer(const std::string& name) const {
    const TensorData* d = bound_input(name);
    return d != nullptr ? d->data() : nullptr;
  }
  /// The memory of output `name` of the last run in memory_space(); throws
  /// LookupError like output().
  virtual const void* output_device_pointer(const std::string& name) const {
    return output(name).data();
  }
  /// Peak device memory of the last run in bytes, if the backend knows it.
  virtual std::optional<size_t> memory_bytes() const { return std::nullopt; }

  /// Wall time in milliseconds of `trials` runs (after `warmup` runs) on
  /// dummy_inputs() at `dims`, their lower quartile (noise only adds); more
  /// runs for a short program, until 2 ms of runs (at most 64). Binds every input (including
  /// persistent ones) with dummy data: persistent ones once, before the first run (as weights are
  /// in use: work a program derives from them once, such as a packed weight, is not timed), the
  /// others before every run. If a warm-up run alone takes longer than `timeout_ms` (> 0), stops
  /// early and returns that time; the first one, which may pay one-time costs (first touches,
  /// packing), only if the run after it does too. Backends with device timers
  /// override this.
  virtual double profile(const DimMap& dims, int warmup, int trials, double timeout_ms = 0);
  /// Whether profile() reports wall time (what timeout_ms bounds). False for
  /// a cost model (the reference interpreter's work count), which the search
  /// then never cuts short by a multiple of another candidate's time.
  virtual bool profiles_wall_time() const { return true; }
};

class Backend {
public:
  virtual ~Backend() = default;
  /// Stable short name ("reference", "cpu", "cuda"); part of the cache key.
  virtual std::string name() const = 0;
  /// The device in words (e.g. the CPU model and ISA); part of the cache key,
  /// so a cache entry is never reused on different hardware.
  virtual std::string device() const = 0;
  /// Add this backend's rulesets to the phases of `registry` (a per-compile
  /// copy of egraph::RuleRegistry::global()), only those whose kernels round
  /// no more than `precision` allows. Default: none.
  virtual void register_rules(egraph::RuleRegistry& registry, MatmulPrecision precision) const;
  /// The rules at the default precision (CompileOptions' default).
  void register_rules(egraph::RuleRegistry& registry) const {
    register_rules(registry, MatmulPrecision::High);
  }
  /// Compile an extracted graph. The program shares ownership of the graph.
  virtual std::unique_ptr<Program> compile(std::shared_ptr<const Graph> graph) = 0;
};

/// The reference interpreter as a backend. Its programs' profile() is a
/// deterministic work count (elements read and written, 1 ns each), not wall
/// time: the interpreter is the oracle, its timings are noise, and a
/// reproducible cost makes the whole pipeline deterministic for a seed.
class ReferenceBackend : public Backend {
public:
  std::string name() const override { return "reference"; }
  std::string device() const override { return "host (reference interpreter)"; }
  std::unique_ptr<Program> compile(std::shared_ptr<const Graph> graph) override;
};

/// The backend for a device name: "cpu" / "cpu-jit" -> cpu::CpuBackend
/// (generated and library kernels), "reference" / "interpreter" ->
/// ReferenceBackend. Throws Error for CUDA (not built) and LookupError for an
/// unknown device.
std::unique_ptr<Backend> backend_for_device(const std::string& device);

}  // namespace luminal::compiler
