#include "luminal/compiler/backend.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <vector>

#include "luminal/backends/cpu/cpu_backend.hpp"
#include "luminal/core/dtype.hpp"
#include "luminal/core/float_convert.hpp"
#include "luminal/egraph/rule_registry.hpp"
#include "luminal/error.hpp"
#include "luminal/reference/interpreter.hpp"

namespace luminal::compiler {

namespace {

// GGUF blocks that all decode to 1: Q8_0 d = 1, q = 1; Q4_0 d = 1, q = 9
// (9 - 8); Q4_1 d = 0, m = 1.
TensorData quantized_ones(DType dtype, std::vector<int64_t> shape) {
  TensorData t(dtype, std::move(shape));
  const DTypeInfo& info = dtype_info(dtype);
  const uint16_t one = float_to_f16_bits(1.0f);
  const size_t blocks = t.nbytes() / info.block_bytes;
  for (size_t b = 0; b < blocks; ++b) {
    std::byte* block = t.data() + b * info.block_bytes;
    std::memset(block, 0, info.block_bytes);
    if (dtype == DType::Q4_1) {
      std::memcpy(block + 2, &one, 2);
    } else {
      std::memcpy(block, &one, 2);
      std::memset(block + 2, dtype == DType::Q8_0 ? 0x01 : 0x99, info.block_bytes - 2);
    }
  }
  return t;
}

}  // namespace

std::map<std::string, TensorData> dummy_inputs(const Graph& graph, const DimMap& dims) {
  std::map<std::string, TensorData> out;
  for (NodeId id : graph.inputs()) {
    const Node& n = graph.node(id);
    std::vector<int64_t> shape;
    for (const Expr& d : n.shape) shape.push_back(d.eval(dims));
    if (is_quantized(n.dtype)) {
      out.emplace(n.name, quantized_ones(n.dtype, std::move(shape)));
      continue;
    }
    const bool is_float = dtype_info(n.dtype).is_float;
    out.emplace(n.name, TensorData::full(n.dtype, std::move(shape), is_float ? 1.0 : 0.0));
  }
  return out;
}

void Program::bind_device_memory(const std::string& name, void* data, size_t bytes,
                                 const std::vector<int64_t>& shape,
                                 std::shared_ptr<const void> owner) {
  if (memory_space() != "host")
    throw Error("bind_device_memory: the default binds host memory; backend memory space \"" +
                memory_space() + "\" needs its own");
  const auto id = graph().find_input(name);
  if (!id) throw LookupError("bind_device_memory: the graph has no input named \"" + name + "\"");
  const DType dtype = graph().node(*id).dtype;
  int64_t numel = 1;
  for (int64_t d : shape) {
    if (d < 0)
      throw ShapeError("bind_device_memory: negative size in the shape of \"" + name + "\"");
    numel *= d;
  }
  const size_t need = storage_bytes(dtype, numel);
  if (bytes != need)
    throw Error("bind_device_memory: input \"" + name + "\" of " + std::to_string(numel) + " " +
                std::string(dtype_name(dtype)) + " elements needs " + std::to_string(need) +
                " bytes, got " + std::to_string(bytes));
  if (data == nullptr && need > 0)
    throw Error("bind_device_memory: null pointer for \"" + name + "\"");
  set_input(name,
            TensorData::borrow(dtype, shape, static_cast<std::byte*>(data), std::move(owner)));
}

namespace {
// Program::profile's timed runs of a short program: at least this much time
// in all, at most this many runs.
constexpr double kMinTimedMs = 2.0;
constexpr int kMaxTrials = 64;
// One-time costs of a first run (first touches of memory, packing weights)
// stay below this: a first run further past the bound is not looked at again.
constexpr double kOneTimeCostMs = 500.0;
// A program whose warm-up took this long gets one timed run: its noise is a
// small part of it, and the search's naive or badly fused candidates take
// seconds at a prefill's dims (a SmolLM2 layer's unfused graph ~2 s at 128
// tokens, timed 1 + 3 times at each of two points, was a third of a cold
// compile's candidate runs).
constexpr double kLongRunMs = 200.0;
}  // namespace

double Program::profile(const DimMap& dims, int warmup, int trials, double timeout_ms) {
  const auto inputs = dummy_inputs(graph(), dims);
  // Persistent inputs (weights, caches) are bound once, as in use: a program
  // may keep work derived from them between runs (a packed weight). The
  // others are bound before every run (run() releases them).
  std::vector<const std::pair<const std::string, TensorData>*> per_run;
  for (const auto& in : inputs) {
    const auto id = graph().find_input(in.first);
    if (!id || !graph().node(*id).persistent) per_run.push_back(&in);
    set_input(in.first, in.second);
  }
  auto timed_run = [&] {
    for (const auto* in : per_run) set_input(in->first, in->second);
    const auto t0 = std::chrono::steady_clock::now();
    run(dims);
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  // A run past timeout_ms ends the profile, except the very first: it may pay
  // one-time costs (first touches of memory, packing a weight), so a second
  // run decides, unless it was past by more than such costs can be.
  double last = 0;
  for (int i = 0; i < warmup; ++i) {
    const double ms = last = timed_run();
    if (timeout_ms <= 0 || ms <= timeout_ms) continue;
    if (i > 0 || ms > timeout_ms + kOneTimeCostMs) return ms;
    const double again = last = timed_run();
    if (again > timeout_ms) return again;
  }
  if (last > kLongRunMs) trials = 1;
  // At least `trials` runs, more for a short program: until kMinTimedMs of
  // runs (at most kMaxTrials); the result is their lower quartile. On a
  // shared machine a pool worker is now and then late to a launch (a
  // scheduler delay of tens of microseconds; the caller then runs every
  // chunk), in bursts: a 20 us GEMV then times at its one-thread speed for a
  // while, and three runs' median picked between two GEMVs by chance.
  std::vector<double> times;
  double total = 0;
  while (static_cast<int>(times.size()) < std::max(trials, 1) ||
         (total < kMinTimedMs && static_cast<int>(times.size()) < kMaxTrials)) {
    times.push_back(timed_run());
    total += times.back();
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 4];
}

void Backend::register_rules(egraph::RuleRegistry& /*registry*/,
                             MatmulPrecision /*precision*/) const {}

namespace {

class InterpreterProgram : public Program {
public:
  explicit InterpreterProgram(std::shared_ptr<const Graph> graph)
      : graph_(std::move(graph)), interp_(*graph_) {}
  const Graph& graph() const override { return *graph_; }
  void set_input(const std::string& name, TensorData data) override {
    interp_.set_input(name, std::move(data));
  }
  bool has_input(const std::string& name) const override { return interp_.has_input(name); }
  const TensorData* bound_input(const std::string& name) const override {
    return interp_.bound_input(name);
  }
  void run(const DimMap& dims) override { interp_.run(dims); }
  const DimMap& dims() const override { return interp_.dims(); }
  const TensorData& output(const std::string& name) const override { return interp_.output(name); }
  const std::map<std::string, TensorData>& outputs() const override { return interp_.outputs(); }

  /// The interpreter is the oracle, not a deployment target: its wall time is
  /// interpretive overhead plus noise, and would make the search (and every
  /// test of it) depend on the machine's load. It reports a reproducible cost
  /// instead: elements written by all nodes, at a nominal 1 ns each, in ms.
  /// The programs still run (warm-up + one trial) so outputs exist and a
  /// warm-up over `timeout_ms` still drops the candidate.
  bool profiles_wall_time() const override { return false; }
  double profile(const DimMap& dims, int warmup, int /*trials*/, double timeout_ms) override {
    const double measured = Program::profile(dims, warmup, 1, timeout_ms);
    if (timeout_ms > 0 && measured > timeout_ms) return measured;
    double elements = 0;
    for (const Node& n : graph_->nodes()) {
      if (n.kind == OpKind::Input || n.kind == OpKind::Output || n.kind == OpKind::Constant)
        continue;
      double numel = 1;
      for (const Expr& d : n.shape) numel *= static_cast<double>(d.eval(dims));
      elements += numel * static_cast<double>(1 + n.operands.size());
    }
    return elements * 1e-6;
  }

private:
  std::shared_ptr<const Graph> graph_;
  Interpreter interp_;
};

}  // namespace

std::unique_ptr<Program> ReferenceBackend::compile(std::shared_ptr<const Graph> graph) {
  if (!graph) throw Error("ReferenceBackend::compile: null graph");
  return std::make_unique<InterpreterProgram>(std::move(graph));
}

std::unique_ptr<Backend> backend_for_device(const std::string& device) {
  std::string dev = device;
  for (char& c : dev) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // "cpu": the best CPU path, the CPU backend (generated and library kernels).
  if (dev == "cpu" || dev == "cpu-jit") return std::make_unique<cpu::CpuBackend>();
  // The reference interpreter: exact (the oracle), no code generation; what
  // op-by-op validation uses.
  if (dev == "reference" || dev == "interpreter") return std::make_unique<ReferenceBackend>();
  if (dev == "cuda" || dev.rfind("cuda:", 0) == 0 || dev == "gpu")
    throw Error("luminal: the CUDA backend is not available in this build (device=\"" + device +
                "\"); use device=\"cpu\"");
  throw LookupError("compile: unknown device \"" + device +
                    "\" (expected \"cpu\", \"reference\" or \"cuda\")");
}

}  // namespace luminal::compiler
