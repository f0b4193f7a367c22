#pragma once
// compile(): HLIR graph -> e-graph -> saturation -> search by timing -> the
// fastest program of a backend (SPEC sections 1, 5, 6).
//
//   1. Cache lookup (compile_cache.hpp): a hit skips steps 2-4.
//   2. import_graph + the registry's pipeline (core phases + the backend's
//      rulesets), bounded by options.budget.
//   3. Search over candidates (one e-node per reachable class):
//        - the original graph's choice first (`prefer`), then `first()`,
//        - then random candidates (a quarter of the budget),
//        - then mutations of the best few (elitism), the mutation size doubling
//          after every `stagnation` candidates without a new best (and falling
//          back to 1 on an improvement);
//      structurally identical candidates (CandidateSpace::hash) are evaluated
//      once. Each candidate is extracted, compiled by the backend and profiled
//      (warm-up + trials, more for a short program; their lower quartile); one that throws or
//      exceeds the per-candidate timeout is dropped. All choices come from one mt19937_64 seeded by
//      options.seed: the same seed gives the same winner. Only the time
//      limit depends on the clock, and stats.search_stop says when it hit.
//   2'. With options.fold, repeated blocks (fold.hpp) that cover at least
//      half of the graph are folded: steps 2-4 run on one representative
//      graph per block kind, the winners are expanded into every instance,
//      (each kind's winner checked as in step 4; the whole expanded graph
//      only with verify_all).
//   4. The winner is checked once against the reference interpreter on the
//      profiling inputs (ints exact, floats within a tolerance); a mismatch
//      throws an Error naming the candidate's hash.
//
// Profiling dims: options.profile_dims, and every other dim variable of the
// inputs at options.default_dim (8).
//
// Environment: LUMINAL_SEED (default seed), LUMINAL_CACHE_DIR (default
// ~/.cache/luminal), LUMINAL_LOG_SEARCH=1 or LUMINAL_LOG=1 (a progress line on
// stderr with the best time so far, and a line per new best).

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "luminal/compiler/backend.hpp"
#include "luminal/core/graph.hpp"
#include "luminal/core/tensor_data.hpp"
#include "luminal/egraph/schedule.hpp"

namespace luminal::compiler {

/// Where a search stands, for a progress display (CompileOptions::on_progress).
struct SearchProgress {
  size_t block = 0;         // the block kind being searched (0-based), of
  size_t blocks = 1;        // this many (1: the graph searched whole)
  size_t candidates = 0;    // evaluated so far, of
  size_t budget = 0;        // search_iters
  double best_ms = 0;       // the best time so far (0: none yet)
  bool confirming = false;  // timing the close contenders again, after the search
};

struct CompileOptions {
  /// Candidate budget: at most this many distinct candidates are evaluated.
  size_t search_iters = 16;
  /// Default: $LUMINAL_SEED, else 0x5eed.
  std::optional<uint64_t> seed;
  /// Wall-time budget of the search in ms (0 = none). Not part of the cache key.
  double time_limit_ms = 0;
  /// A candidate whose warm-up run exceeds this is dropped (0 = none).
  double per_candidate_timeout_ms = 10'000;
  int warmup = 1;
  int trials = 3;
  bool cache = true;
  /// Default: $LUMINAL_CACHE_DIR, else ~/.cache/luminal.
  std::string cache_dir;
  /// Dims to profile at; missing dim variables take default_dim.
  DimMap profile_dims;
  /// More points to time every candidate at, its times added to the one at
  /// profile_dims (dims not listed keep their profile_dims values). A program
  /// that serves both a prefill and decode steps is timed at both, so that
  /// the search does not pick, by noise at one shape, what is slow at the
  /// other (a fused attention is a few microseconds apart from the unfused
  /// one at 4 tokens, milliseconds at 32). The winner is checked against the
  /// interpreter at profile_dims only.
  std::vector<DimMap> extra_profile_dims;
  /// Points timed only when the close contenders are timed again at the end
  /// of the search (after every candidate was timed at profile_dims and
  /// extra_profile_dims), their times added: the contenders are then ranked
  /// by these longer sums alone. A long prefill decides between kernels that
  /// tie at a short one (a product that decodes its weight on every call wins
  /// from ~64 rows) without every candidate paying for it: the naive seeds
  /// take seconds per run at a long prefill's dims, the contenders a few ms.
  std::vector<DimMap> confirm_profile_dims;
  int64_t default_dim = 8;
  /// Candidates without a new best before the mutation size doubles.
  size_t stagnation = 4;
  /// How many of the best candidates are mutated (elitism).
  size_t elite = 3;
  /// Check EVERY evaluated candidate (not only the winner) against the
  /// interpreter: equivalence fuzzing through the compile pipeline.
  bool verify_all = false;
  /// Relative/absolute tolerance of the float comparison with the interpreter.
  double tolerance = 1e-3;
  egraph::Budget budget;
  /// Fold repeated blocks (fold.hpp): saturate and search one representative
  /// per block kind and expand the winner into every instance. Applies when
  /// blocks cover at least half of the graph. Not part of the cache key (both
  /// forms compute the same outputs).
  bool fold = true;
  /// Which roundings matrix products may add to f32 arithmetic
  /// (matmul_precision.hpp): High lets products use integer dot products
  /// (16-bit activations; 14-bit operands for f32 weights) where the backend
  /// has them.
  MatmulPrecision matmul_precision = default_matmul_precision();
  /// Called after every candidate (and when the confirmation starts) with
  /// where the search stands; may be empty. Not part of the cache key.
  std::function<void(const SearchProgress&)> on_progress;
};

struct CompileStats {
  size_t egraph_nodes = 0;
  size_t egraph_classes = 0;
  size_t candidates = 0;  // evaluated (compiled + profiled, incl. dropped ones)
  size_t dropped = 0;     // threw or exceeded the per-candidate timeout
  double compile_ms = 0;
  bool cached = false;
  double best_ms = 0;
  std::string stop_reason;  // of saturation (egraph::to_string(StopReason))
  /// Why the search ended: "budget", "exhausted" (no new candidates turn up),
  /// "time", or "unprofilable" (the graph does not run on the dummy inputs,
  /// e.g. an integer Mod by an input; the original graph is kept, unsearched).
  std::string search_stop;
  uint64_t winner_hash = 0;  // CandidateSpace::hash of the winner
  uint64_t seed = 0;
  DimMap profile_dims;
  /// Folding (CompileOptions::fold): kinds of repeated blocks and their
  /// instances; 0 when the graph was compiled whole. When folded, egraph_*,
  /// candidates and dropped sum over the kinds' representative graphs,
  /// best_ms is the sum of each kind's best time times its instances (nodes
  /// outside every block keep their original form and are not timed). Each
  /// kind's winner is checked against the interpreter; the expanded graph as a
  /// whole only with verify_all (at dims of 1).
  size_t block_kinds = 0;
  size_t block_instances = 0;
};

/// The compiled result. Mirrors Program: set_input / run / output, with
/// persistent inputs kept across runs and dims changing without recompiling.
class CompiledModel {
public:
  CompiledModel(std::shared_ptr<const Graph> chosen, std::unique_ptr<Program> program,
                CompileStats stats);
  void set_input(const std::string& name, TensorData data) {
    program_->set_input(name, std::move(data));
  }
  bool has_input(const std::string& name) const { return program_->has_input(name); }
  void run(const DimMap& dims = {}) { program_->run(dims); }
  const DimMap& dims() const { return program_->dims(); }
  const TensorData& output(const std::string& name) const { return program_->output(name); }
  const std::map<std::string, TensorData>& outputs() const { return program_->outputs(); }
  /// See Program::take_output.
  TensorData take_output(const std::string& name) { return program_->take_output(name); }
  /// See Program::update_in_place.
  bool update_in_place(const std::string& name) { return program_->update_in_place(name); }
  /// Device memory (see Program): where buffers live, zero-copy binding, pointers.
  std::string memory_space() const { return program_->memory_space(); }
  void bind_device_memory(const std::string& name, void* data, size_t bytes,
                          const std::vector<int64_t>& shape,
                          std::shared_ptr<const void> owner = nullptr) {
    program_->bind_device_memory(name, data, bytes, shape, std::move(owner));
  }
  const void* input_device_pointer(const std::string& name) const {
    return program_->input_device_pointer(name);
  }
  const void* output_device_pointer(const std::string& name) const {
    return program_->output_device_pointer(name);
  }
  const CompileStats& stats() const { return stats_; }
  /// The extracted HLIR graph of the winning candidate.
  const Graph& graph() const { return *chosen_; }
  Program& program() { return *program_; }

private:
  std::shared_ptr<const Graph> chosen_;
  std::unique_ptr<Program> program_;
  CompileStats stats_;
};

/// Compile `graph` for `backend`. Throws Error if the graph has no outputs, if
/// no candidate could be compiled and profiled, or if the winner disagrees
/// with the interpreter.
CompiledModel compile(const Graph& graph, Backend& backend, const CompileOptions& options = {});

/// The seed compile() uses when options.seed is unset.
uint64_t default_seed();
/// The dims compile() profiles at.
DimMap profile_dims(const Graph& graph, const CompileOptions& options);
/// "" if `actual` matches `expected` (same dtype and shape; ints and bools
/// exact, floats within rel/abs `tolerance`, NaN == NaN), else the first difference.
std::string compare_outputs(const TensorData& expected, const TensorData& actual, double tolerance);

}  // namespace luminal::compiler
