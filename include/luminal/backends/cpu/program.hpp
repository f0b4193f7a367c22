#pragma once
// CpuProgram: a graph compiled to generated CPU kernels, run many times.
//
// The interface mirrors luminal::Interpreter (set_input / run(dims) / output),
// so tests and callers can swap one for the other. Compilation happens in the
// constructor: one kernel per region (regions given by the caller, e.g. the
// e-graph search's extraction; by default one region per node, the unfused
// baseline), compiled by the JIT with its disk cache. run() only launches the
// prepared kernels: no code generation or compilation happens after the
// constructor, whatever the dims.
//
// Memory: inputs are used in place (no copy) and graph outputs are written
// directly into the TensorData that output() returns (kept across runs while
// its shape does not change). Every other buffer lives in one arena whose
// offsets come from plan_memory (lifetime-based reuse); the plan is redone
// only when the dims change. Persistent inputs stay bound across runs; the
// others are released at the end of run(), as in the interpreter.
//
// Profiling: with LUMINAL_PROFILE_KERNELS=1 every kernel launch is timed and
// the slowest kernels are printed to stderr when the program is destroyed.
//
// Threads: each kernel launch is cut into at most ThreadPool::size() pieces
// (fewer for small work) and run on the pool (the shared pool by default).

#include <array>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "luminal/backends/cpu/codegen.hpp"
#include "luminal/backends/cpu/jit.hpp"
#include "luminal/backends/cpu/region.hpp"
#include "luminal/backends/cpu/thread_pool.hpp"
#include "luminal/core/graph.hpp"
#include "luminal/core/tensor_data.hpp"

namespace luminal::cpu {

struct CpuOptions {
  /// The kernels: disjoint regions of the nodes the outputs need (Input nodes
  /// excluded); every needed node in no region gets a region of its own (so
  /// an empty list means one kernel per node). A region with no outputs listed
  /// gets them derived (members read by other regions, and Output nodes).
  std::vector<Region> regions;
  /// Threads for this program (its own pool); 0: the shared pool.
  int num_threads = 0;
  JitOptions jit;
  /// Called on every generated kernel before it is compiled (a test hook,
  /// e.g. to inject a syntax error).
  std::function<void(CpuKernel&)> kernel_hook;
};

class CpuProgram {
public:
  /// Compile `graph` (which must outlive the program). Throws luminal::Error
  /// for malformed regions and KernelCompileError if a kernel does not compile.
  explicit CpuProgram(const Graph& graph, CpuOptions options = {});
  ~CpuProgram();
  CpuProgram(const CpuProgram&) = delete;
  CpuProgram& operator=(const CpuProgram&) = delete;

  /// Bind an input. Checks the name, dtype and rank now and the dims at run().
  void set_input(const std::string& name, TensorData data);
  bool has_input(const std::string& name) const;
  const TensorData* bound_input(const std::string& name) const;
  /// Run every kernel. Dims not given are inferred from the inputs (as in the
  /// interpreter). Throws IndexError for an out-of-range Gather index and
  /// luminal::Error for integer modulo by zero, naming the node.
  void run(const DimMap& dims = {});
  /// run(), stopping between kernels once past `deadline` (a profile's
  /// bound); false when it stopped (the outputs are then undefined).
  bool run_before(const DimMap& dims, std::chrono::steady_clock::time_point deadline);
  const DimMap& dims() const { return dims_; }
  /// A named output of the last run(); throws LookupError if unknown.
  const TensorData& output(const std::string& name) const;
  const std::map<std::string, TensorData>& outputs() const { return outputs_; }
  /// Update the state behind output `name` in place (compiler::Program::
  /// update_in_place): the output must be a Scatter (its own kernel) into a
  /// persistent input read by nothing else. Then the Scatter's kernel skips its
  /// copy of the destination and writes into the bound input, the Output's copy
  /// kernel is skipped, output(name) returns the input, and outputs() omits it.
  bool update_in_place(const std::string& name);
  /// Output `name` moved out to the caller (no copy); the next run allocates a
  /// new buffer for it. An output updated in place is copied.
  TensorData take_output(const std::string& name);

  struct Stats {
    size_t kernels = 0;
    size_t kernels_from_cache = 0;
    size_t kernels_compiled = 0;
    size_t distinct_kernels = 0;  // kernels after merging those with equal source
    double compile_seconds = 0;   // code generation + JIT, in the constructor
    size_t arena_bytes = 0;       // intermediates' arena of the last run (the plan's peak)
    size_t live_peak_bytes = 0;   // most intermediate bytes alive at once (lower bound)
    size_t outputs_written_by_producer = 0;  // graph outputs with no copy kernel
    size_t plans = 0;  // memory plans made: the first run's, then when sizes outgrew their room
                       // or fell to half of it
    /// Bytes of weight-file pages released after packing (CpuKernel::
    /// packed_replaces_input, TensorData::release_pages), over all runs.
    size_t released_bytes = 0;
  };
  const Stats& stats() const { return stats_; }
  /// The generated kernels, in execution order.
  const std::vector<CpuKernel>& kernels() const { return kernels_; }

private:
  bool run_until(const DimMap& dims, std::optional<std::chrono::steady_clock::time_point> deadline);
  struct Buffer;
  void plan(const DimMap& dims);
  std::byte* address(NodeId node);
  void launch(size_t kernel, const DimMap& dims);
  std::optional<std::chrono::steady_clock::time_point> deadline_;  // of the run in progress

  const Graph& graph_;
  std::vector<NodeId> needed_inputs_;  // inputs the outputs depend on (checked each run)
  std::unique_ptr<ThreadPool> own_pool_;
  ThreadPool* pool_ = nullptr;
  std::vector<CpuKernel> kernels_;
  std::vector<KernelEntry> entries_;  // per kernel, per launch (flattened)
  std::vector<size_t> first_entry_;   // index into entries_ of each kernel's first launch
  std::vector<std::shared_ptr<SharedLibrary>> libraries_;
  std::vector<Buffer> buffers_;  // one per kernel output
  std::map<NodeId, size_t> buffer_of_;
  std::vector<std::byte> arena_;         // over-allocated by 63 bytes for alignment
  std::byte* arena_base_ = nullptr;      // 64-byte aligned start of the arena
  std::vector<size_t> offsets_;          // arena offset per buffer (intermediates)
  std::vector<size_t> scratch_offsets_;  // arena offset of each kernel's scratch
  // The planned sizes that depend on dims (an arena buffer or a kernel's
  // scratch) and the room each got in the current plan (plan()).
  struct SizedEntry {
    size_t index;  // into buffers_, or kernels_ for a scratch
    bool scratch;
    size_t room;
    uint64_t vars;  // the dims its size uses (var_bit of plan_vars_)
  };
  std::vector<SizedEntry> sized_;
  std::vector<std::string> plan_vars_;                   // the dims the sizes use
  std::vector<std::optional<int64_t>> plan_var_values_;  // their values at the last check
  static uint64_t var_bit(size_t v) { return v < 64 ? uint64_t{1} << v : ~uint64_t{0}; }
  size_t planned_size(const SizedEntry& e, const DimMap& dims) const;
  bool planned_ = false;
  std::map<std::string, TensorData> inputs_;
  std::map<std::string, TensorData> outputs_;
  // Per node: the bound tensor of an Input (null while unbound; inputs_ keeps
  // it at a stable address) and the buffer of a kernel output (kNoBuffer
  // otherwise): address() looks no names up (a SmolLM2 decode step launches
  // ~700 kernels).
  static constexpr size_t kNoBuffer = static_cast<size_t>(-1);
  std::vector<TensorData*> input_data_;
  std::vector<size_t> buffer_index_;
  std::vector<NodeId> transient_inputs_;  // non-persistent inputs: unbound after each run
  std::vector<NodeId> inputs_with_dims_;  // (resolve_dims: the others' shapes are fixed)
  void bind(NodeId input, TensorData data);
  // launch()'s working vectors, kept between launches (no allocations per launch).
  std::vector<void*> launch_buffers_;
  std::vector<int64_t> launch_dims_;
  std::vector<int32_t> launch_status_;
  std::vector<std::array<int64_t, 3>> launch_error_;
  DimMap dims_;
  Stats stats_;
  std::vector<double> profile_;  // seconds per kernel (LUMINAL_PROFILE_KERNELS=1), else empty
  bool profile_all_ = false;     // LUMINAL_PROFILE_KERNELS=all: list every kernel
  double profile_run_s_ = 0;     // ... and the whole of run(): the rest is outside kernels
  int64_t profile_runs_ = 0;
  // In-place state updates (update_in_place).
  std::map<std::string, std::string> in_place_;  // output name -> input name
  std::set<std::string> in_place_inputs_;        // the inputs in in_place_ (plan_pack)
  std::map<NodeId, NodeId> aliased_;             // Scatter node -> the Input node it writes
  std::vector<bool> skip_kernel_;                // per kernel: not launched
  std::vector<bool> skip_first_launch_;          // per kernel: the dest copy is skipped
  // Results written straight into a graph output's tensor (its copy kernel skipped).
  std::map<NodeId, std::string> forwarded_;  // node -> output name
  // Kernels' packed inputs (CpuKernel::packed_bytes): memory kept between
  // runs, and what it holds.
  struct PackedFrom {
    const void* source = nullptr;  // the packed input's data
    uint64_t version = 0;          // its set_input count when packed
    int64_t bytes = -1;            // the packed size (-1: nothing valid)
    bool operator==(const PackedFrom&) const = default;
  };
  struct Packed {
    std::unique_ptr<std::byte[]> memory;  // over-allocated by 63 bytes for alignment
    size_t capacity = 0;
    PackedFrom holds;
  };
  // What a launch does with kernel k's packed memory: skip its pack launches
  // (up_to_date), and record `holds` once they have run (record).
  struct PackPlan {
    bool up_to_date = false, record = false;
    PackedFrom holds;
  };
  // Appends kernel k's packed memory to `buffers` (allocating it as needed).
  PackPlan plan_pack(size_t k, const DimMap& dims, std::vector<void*>& buffers);
  std::vector<Packed> packed_;                      // per kernel
  std::map<std::string, uint64_t> input_versions_;  // input name -> its last set_input
  uint64_t next_version_ = 0;
};

}  // namespace luminal::cpu
