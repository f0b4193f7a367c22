#include "luminal/compiler/backend.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
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

// An input's shape at dims.
std::vector<int64_t> shape_at(const Node& input, const DimMap& dims) {
  std::vector<int64_t> shape;
  for (const Expr& d : input.shape) shape.push_back(d.eval(dims));
  return shape;
}

// One input's dummy value (dummy_inputs).
TensorData dummy_value(DType dtype, std::vector<int64_t> shape) {
  if (is_quantized(dtype)) return quantized_ones(dtype, std::move(shape));
  return TensorData::full(dtype, std::move(shape), dtype_info(dtype).is_float ? 1.0 : 0.0);
}

// Dummy values shared by the profiles of a compile (release_profile_inputs):
// a search times each candidate at two or three dims points, and making a
// model's dummy weights again for each (an LM head's 30 MB, filled, then
// copied into the program) was a tenth of a SmolLM2 search. The values are
// never written (programs read their inputs), so every program may borrow
// them. Least recently used first out past kProfileInputBytes.
constexpr size_t kProfileInputBytes = size_t{1} << 30;
struct ProfileInputCache {
  std::mutex mutex;
  std::list<std::pair<std::string, std::shared_ptr<TensorData>>> entries;  // most recent first
  size_t bytes = 0;
};
ProfileInputCache& profile_inputs() {
  static ProfileInputCache cache;
  return cache;
}

std::shared_ptr<TensorData> shared_dummy_value(DType dtype, const std::vector<int64_t>& shape) {
  std::string key(dtype_name(dtype));
  for (int64_t d : shape) key += ' ' + std::to_string(d);
  ProfileInputCache& cache = profile_inputs();
  std::lock_guard<std::mutex> lock(cache.mutex);
  for (auto it = cache.entries.begin(); it != cache.entries.end(); ++it)
    if (it->first == key) {
      cache.entries.splice(cache.entries.begin(), cache.entries, it);
      return it->second;
    }
  auto value = std::make_shared<TensorData>(dummy_value(dtype, shape));
  cache.entries.emplace_front(key, value);
  cache.bytes += value->nbytes();
  while (cache.bytes > kProfileInputBytes && cache.entries.size() > 1) {
    cache.bytes -= cache.entries.back().second->nbytes();
    cache.entries.pop_back();
  }
  return value;
}

}  // namespace

std::map<std::string, TensorData> dummy_inputs(const Graph& graph, const DimMap& dims) {
  std::map<std::string, TensorData> out;
  for (NodeId id : graph.inputs()) {
    const Node& n = graph.node(id);
    out.emplace(n.name, dummy_value(n.dtype, shape_at(n, dims)));
  }
  return out;
}

void release_profile_inputs() {
  ProfileInputCache& cache = profile_inputs();
  std::lock_guard<std::mutex> lock(cache.mutex);
  cache.entries.clear();
  cache.bytes = 0;
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
  // The dummy values, shared (shared_dummy_value) and bound as borrowed
  // tensors: no copies. Persistent inputs (weights, caches) are bound once,
  // as in use: a program may keep work derived from them between runs (a
  // packed weight), and one already bound to the same value (the previous
  // dims point) is not bound again, so that work is not redone. The others
  // are bound before every run (run() releases them).
  struct Bound {
    std::string name;
    std::shared_ptr<TensorData> value;
  };
  std::vector<Bound> per_run;
  auto bind = [&](const Bound& b) {
    set_input(b.name,
              TensorData::borrow(b.value->dtype(), b.value->shape(), b.value->data(), b.value));
  };
  for (NodeId id : graph().inputs()) {
    const Node& n = graph().node(id);
    const Bound b{n.name, shared_dummy_value(n.dtype, shape_at(n, dims))};
    if (!n.persistent) {
      per_run.push_back(b);
    } else if (const TensorData* now = bound_input(n.name);
               now != nullptr && now->data() == b.value->data()) {
      continue;  // (one value per dtype and shape: the same memory is the same value)
    }
    bind(b);
  }
  // A run with a bound stops once past it (run_before: between kernels), so
  // a hopeless candidate's run costs the bound, not its own time.
  auto timed_run = [&](double bound_ms = 0) {
    for (const Bound& b : per_run) bind(b);
    const auto t0 = std::chrono::steady_clock::now();
    if (bound_ms > 0) {
      run_before(dims, t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                std::chrono::duration<double, std::milli>(bound_ms)));
    } else {
      run(dims);
    }
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  // A run past timeout_ms ends the profile, except the very first: it may pay
  // one-time costs (first touches of memory, packing a weight), so a second
  // run decides, unless it was past by more than such costs can be.
  double last = 0;
  for (int i = 0; i < warmup; ++i) {
    const double bound = timeout_ms <= 0 ? 0 : timeout_ms + (i == 0 ? kOneTimeCostMs : 0);
    const double ms = last = timed_run(bound);
    if (timeout_ms <= 0 || ms <= timeout_ms) continue;
    if (i > 0 || ms > timeout_ms + kOneTimeCostMs) return ms;
    const double again = last = timed_run(timeout_ms);
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
